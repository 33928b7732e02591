/** `ticketd fence`: after every backend was restored, each counter moves past anything issued since the backup (core/fence.ts). */
import type { Allocator } from '../allocator/allocator.js';
import { planFence, type FencePlan } from '../core/fence.js';
import { largestIncrement } from '../core/stripes.js';
import { BackendsUnavailableError, FenceRefusedError } from '../core/errors.js';
import { requireEveryBackend } from './init.js';
import { listSequences } from './sequence-list.js';

/** The fence of one sequence, with where it starts. */
export interface SequenceFence extends FencePlan {
  readonly sequence: string;
  readonly highestTicket: bigint;
  /** A strict sequence's bound is not moved by the fence (docs/strict-sequences.md): the operator retires it. */
  readonly strict: boolean;
}

/** How to bound what was issued since the backup. */
export interface FenceOptions {
  readonly margin: number;
  /** At most this many tickets of any sequence were taken since the backup (the operator's bound). */
  readonly ticketsBound?: bigint;
}

/** Plans the fence of every sequence on the backends; changes nothing. Needs every backend. */
export async function planFences(allocator: Allocator, options: FenceOptions): Promise<SequenceFence[]> {
  await requireEveryBackend(allocator, 'fence');
  const increment = largestIncrement(await allocator.fleet.stripes());
  const fences: SequenceFence[] = [];
  const { sequences, unanswered } = await listSequences(allocator);
  if (unanswered.length > 0)
    throw new BackendsUnavailableError(
      `fence needs every backend: ${unanswered.map((u) => `${u.backend}: ${u.reason}`).join('; ')}`,
    );
  for (const { settings } of sequences) {
    const histories = await allocator.fleet.claimHistories(settings.name);
    const highestTicket = await allocator.fleet.highestTicketUsed(settings.name);
    const plan = planFence({
      settings,
      highestTicket,
      histories,
      increment,
      margin: options.margin,
      ...(options.ticketsBound !== undefined && { ticketsBound: options.ticketsBound }),
    });
    fences.push({
      sequence: settings.name,
      highestTicket,
      strict: settings.ids === 'strict' && settings.retired !== true,
      ...plan,
    });
  }
  return fences;
}

/**
 * Moves every counter as planned, and drops every range given back (docs/uniqueness.md, "Giving
 * ranges back": with every backend restored, a returned row's claims may be gone with them). Refuses, before changing anything, a fence that would exhaust a
 * sequence, or one that would leave a live strict sequence on restored bounds: the operator retires
 * it first (and creates a new one), so no front end can start on a bound below IDs already issued.
 */
export async function applyFences(allocator: Allocator, fences: readonly SequenceFence[]): Promise<void> {
  const strict = fences.filter((f) => f.strict).map((f) => f.sequence);
  if (strict.length > 0) {
    throw new FenceRefusedError(
      `fence does not raise strict bounds, and ${strict.join(', ')} would start on restored ones, which may lie below IDs already issued: retire each first (npx ticketd sequences retire <name>), create a new one under another name, then run fence --apply again (docs/strict-sequences.md)`,
    );
  }
  const exhausting = fences.filter((f) => f.exhausts).map((f) => f.sequence);
  if (exhausting.length > 0) {
    throw new FenceRefusedError(
      `fence would move ${exhausting.join(', ')} past maxId; give --tickets with a bound you know, or fence the others by hand (docs/operating.md)`,
    );
  }
  for (const f of fences) await allocator.fleet.advanceEverywhere(f.sequence, f.nextTicket);
  // Ranges given back came back with the backups, and their claims may not have: none is reused.
  await allocator.returns.dropAll();
}
