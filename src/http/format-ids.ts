/** IDs leave ticketd as decimal strings. Formatting is the hot path of batch requests. */
import type { IdRange } from '../core/ticket-math.js';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Calls `emit` with every ID of the ranges, as a decimal string, in order. */
export function forEachId(ranges: readonly IdRange[], emit: (id: string) => void): void {
  for (const { first, last } of ranges) {
    if (last <= MAX_SAFE) {
      // Below 2^53 a double is exact and its toString is several times faster than a bigint's.
      for (let id = Number(first), end = Number(last); id <= end; id++) emit(String(id));
    } else {
      for (let id = first; id <= last; id++) emit(id.toString());
    }
  }
}

/** `"a","b",…`: the inside of a JSON array of ID strings. */
export function idsAsJsonList(ranges: readonly IdRange[]): string {
  return join(ranges, '"', '",', 1);
}

/** One ID per line, each line ending in a newline. */
export function idsAsLines(ranges: readonly IdRange[]): string {
  return join(ranges, '', '\n', 0);
}

/** Every ID wrapped in `before` and `after`, with the last `trim` characters dropped. */
function join(ranges: readonly IdRange[], before: string, after: string, trim: number): string {
  // String concatenation builds a rope in V8: cheaper than an array of parts and a join.
  let out = '';
  forEachId(ranges, (id) => {
    out += before + id + after;
  });
  return trim > 0 ? out.slice(0, -trim) : out;
}
