/** `ticketd fence`: after every backend was restored, each counter moves past anything issued since the backup (core/fence.ts). */
import type { Allocator } from '../allocator/allocator.js';
import { planFence, type FencePlan } from '../core/fence.js';
import type { SequenceSettings } from '../core/sequence.js';
import { largestIncrement } from '../core/stripes.js';
import { FenceRefusedError } from '../errors.js';
import { requireEveryBackend } from './init.js';

/** The fence of one sequence, with where it starts. */
export interface SequenceFence extends FencePlan {
  readonly sequence: string;
  readonly highestTicket: bigint;
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
  const increment = largestIncrement(await allocator.stripes());
  const fences: SequenceFence[] = [];
  for (const settings of await everySequence(allocator)) {
    const readings = await allocator.fenceReadings(settings.name);
    const histories = readings.flatMap((r) => r.histories);
    let highestTicket = 0n;
    for (const r of readings) if (r.nextTicket - 1n > highestTicket) highestTicket = r.nextTicket - 1n;
    for (const h of histories) if (h.highest > highestTicket) highestTicket = h.highest;
    const plan = planFence({ settings, highestTicket, histories, increment, margin: options.margin, ...(options.ticketsBound !== undefined && { ticketsBound: options.ticketsBound }) });
    fences.push({ sequence: settings.name, highestTicket, ...plan });
  }
  return fences;
}

/** Moves every counter as planned; refuses, before changing anything, a fence that would exhaust a sequence. */
export async function applyFences(allocator: Allocator, fences: readonly SequenceFence[]): Promise<void> {
  const exhausting = fences.filter((f) => f.exhausts).map((f) => f.sequence);
  if (exhausting.length > 0) {
    throw new FenceRefusedError(`fence would move ${exhausting.join(', ')} past maxId; give --tickets with a bound you know, or fence the others by hand (docs/operating.md)`);
  }
  for (const f of fences) await allocator.advanceEverywhere(f.sequence, f.nextTicket);
}

async function everySequence(allocator: Allocator): Promise<SequenceSettings[]> {
  const byName = new Map<string, SequenceSettings>();
  for (const answer of await allocator.readSequences()) {
    if (!answer.ok) throw answer.error;
    for (const s of answer.value) byName.set(s.name, s);
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}
