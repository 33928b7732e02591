/** `ticketd init`: schema, backend identity and the `default` sequence on every backend. */
import type { Allocator } from '../allocator/allocator.js';
import { DEFAULT_BLOCK_SIZE, DEFAULT_SEQUENCE_NAME, parseSequenceSettings } from '../core/sequence.js';
import { BackendsUnavailableError } from '../errors.js';
import type { TicketService } from './ticket-service.js';
import { errorText } from '../util/error-text.js';

/** What init did on one backend. */
export interface InitResult {
  readonly backend: string;
  readonly identity: string;
  /** Sequences stored gated now, out of reach of ticketd 0.5 and older (core/versions.ts). */
  readonly gated: readonly string[];
}

/** Connects to every backend (checking its settings); throws naming the first that failed. */
export async function requireEveryBackend(allocator: Allocator, command: string): Promise<void> {
  const first = (await allocator.probe())[0];
  if (first !== undefined) {
    const reason = errorText(first.error);
    throw new BackendsUnavailableError(`${command} needs every backend: ${first.backend} failed: ${reason}; start it (or fix TICKETD_BACKENDS) and run ${command} again`, { cause: first.error });
  }
}

/** Applies the schema everywhere, then creates `default`. Idempotent; needs every backend up. */
export async function initBackends(allocator: Allocator, service: TicketService): Promise<InitResult[]> {
  await requireEveryBackend(allocator, 'init');
  const results = await allocator.applySchema();
  await service.createSequence(parseSequenceSettings(DEFAULT_SEQUENCE_NAME, { blockSize: String(DEFAULT_BLOCK_SIZE) }));
  return results;
}
