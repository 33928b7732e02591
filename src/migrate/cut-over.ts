/**
 * Why the old version (inserting through AUTO_INCREMENT) and the new one (inserting ticketd's IDs)
 * never take the same ID while both run, in one place (docs/migrating.md, "Why the two writers
 * cannot collide"). The column's range is cut in three, once, by `migrate apply`:
 *
 *   (…, startAfter]          rows from before the migration; nobody writes here again
 *   (startAfter, maxId]      ticketd's sequence: only IDs ticketd issued are written here
 *   (maxId, columnMax]       the reserve: the old version's AUTO_INCREMENT, which ticketd never reaches
 *
 * 1. Apply moves AUTO_INCREMENT to maxId + 1 before the sequence exists, so no insert without an ID
 *    lands at or below maxId from then on.
 * 2. InnoDB moves the counter only upward, and only past a value inserted at or above it. The new
 *    version inserts IDs ≤ maxId < counter: it never moves the counter, so it never pulls it into,
 *    or pushes it past, anything. (An upward move of the counter only helps.)
 * 3. ticketd never issues above maxId (core/blocks.ts clips every block), however its processes and
 *    SDK clients restart or drain cached blocks. So an old-version row (> maxId) and a new-version
 *    row (≤ maxId) never share an ID, in any order of inserts.
 * 4. A rollback keeps the counter where it is (above maxId): old writers coming back still take IDs
 *    above everything ticketd issued or may still drain from its caches.
 *
 * The argument needs AUTO_INCREMENT to stay above maxId: `verify` checks it, and the docs forbid
 * lowering it by hand or widening the sequence into the reserve.
 */
import type { SequenceSettings } from '../core/sequence.js';

/** The share of the free range (startAfter, columnMax] left to the old version when no --legacy-reserve is given: 1/16. */
export const DEFAULT_RESERVE_DIVISOR = 16n;

/** IDs kept above the sequence for the old version's AUTO_INCREMENT, when none are asked for. */
export function defaultReserve(columnMax: bigint, startAfter: bigint): bigint {
  const free = columnMax - startAfter;
  return free <= 0n ? 0n : free / DEFAULT_RESERVE_DIVISOR;
}

/** Which part of the column an ID lies in, and so who may have written it. */
export type IdRegion = 'before' | 'ticketd' | 'reserve';

/** The region of `id` for a sequence cut out of a column as above. */
export function regionOf(id: bigint, settings: Pick<SequenceSettings, 'startAfter' | 'maxId'>): IdRegion {
  if (id <= settings.startAfter) return 'before';
  return id <= settings.maxId ? 'ticketd' : 'reserve';
}

/**
 * What is wrong with the table's AUTO_INCREMENT for a live sequence, or undefined. An insert without
 * an ID takes `counter` (or above); at or below maxId that is an ID ticketd may issue.
 */
export function counterProblem(
  counter: bigint | undefined,
  settings: Pick<SequenceSettings, 'startAfter' | 'maxId'>,
): string | undefined {
  if (counter === undefined || counter > settings.maxId) return undefined;
  return `AUTO_INCREMENT is ${counter}, inside ticketd's range (${settings.startAfter}, ${settings.maxId}]: the next insert without an ID takes an ID ticketd may issue`;
}

/**
 * Where the old version's AUTO_INCREMENT must start when it takes over again: above every ID the
 * sequence may have issued (`highestId`) and, when the sequence keeps a reserve, above maxId, so
 * that the counter is never pulled back into ticketd's range.
 */
export function rollbackCounter(
  settings: Pick<SequenceSettings, 'maxId'>,
  columnMax: bigint,
  highestId: bigint,
): bigint {
  const keepsReserve = settings.maxId < columnMax;
  const floor = keepsReserve && settings.maxId > highestId ? settings.maxId : highestId;
  return floor + 1n;
}
