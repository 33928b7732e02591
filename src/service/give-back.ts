/**
 * A process that stops cleanly gives its cached IDs back (docs/operating.md, "Giving IDs back"):
 * each sequence that takes IDs back closes its cache for takes, then records what was left, one row
 * per range, on a backend (allocator/range-returns.ts). What is not recorded within the time is lost:
 * a gap, as before.
 */
import type { Allocator } from '../allocator/allocator.js';
import { reuseAllowed, sizeOf, tailOf } from '../core/returned-ranges.js';
import type { IdRange } from '../core/blocks.js';
import type { Logger } from '../logger.js';
import { errorText } from '../util/error-text.js';
import { settleWithin } from '../util/settle-within.js';
import type { SequenceEntry } from './sequence-entry.js';

/** How long a stopping process spends giving its cached IDs back before it closes the backend pools. */
export const GIVE_BACK_WITHIN_MS = 2000;

/** Gives back what the caches of these sequences hold; returns how many IDs were recorded. */
export async function giveBackCaches(
  allocator: Allocator,
  logger: Logger,
  entries: Iterable<[string, SequenceEntry]>,
  withinMs: number = GIVE_BACK_WITHIN_MS,
): Promise<bigint> {
  const writes: Promise<bigint>[] = [];
  for (const [name, entry] of entries) {
    if (!reuseAllowed(entry.settings)) continue;
    // Closed for takes before anything is recorded: no ID of these ranges is handed out from here on.
    for (const range of entry.cache.surrender()) writes.push(giveBackOne(allocator, logger, name, range));
  }
  const recorded = await settleWithin(writes, withinMs);
  const total = recorded.reduce((sum, n) => sum + n, 0n);
  if (writes.length > 0)
    logger.info(
      { ranges: writes.length, recorded: recorded.length, ids: String(total) },
      `gave back ${total} cached IDs in ${recorded.length} of ${writes.length} ranges`,
    );
  return total;
}

async function giveBackOne(allocator: Allocator, logger: Logger, name: string, range: IdRange): Promise<bigint> {
  const tail = tailOf(name, range, range.first);
  if (tail === undefined) return 0n;
  try {
    await allocator.returns.giveBack(tail);
    return sizeOf(tail);
  } catch (error) {
    logger.warn(
      { sequence: name, first: String(tail.first), last: String(tail.last), err: errorText(error) },
      `cached IDs ${tail.first}..${tail.last} of sequence ${name} were not given back: they are lost (a gap)`,
    );
    return 0n;
  }
}
