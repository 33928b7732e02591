/** IDs leave ticketd as decimal strings. Formatting is the hot path of batch requests. */
import type { IssuedIds } from '../service/opaque-ids.js';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Calls `emit` with every ID, as a decimal string, in order. */
export function forEachId(ids: IssuedIds, emit: (id: string) => void): void {
  if (ids instanceof BigUint64Array) {
    for (let k = 0; k < ids.length; k++) emit(ids[k]!.toString());
    return;
  }
  for (const { first, last } of ids) {
    if (last <= MAX_SAFE) {
      // Below 2^53 a double is exact and its toString is several times faster than a bigint's.
      for (let id = Number(first), end = Number(last); id <= end; id++) emit(String(id));
    } else {
      for (let id = first; id <= last; id++) emit(id.toString());
    }
  }
}

/** `"a","b",…`: the inside of a JSON array of ID strings. */
export function idsAsJsonList(ids: IssuedIds): string {
  return join(ids, '"', '",', 1);
}

/** One ID per line, each line ending in a newline. */
export function idsAsLines(ids: IssuedIds): string {
  return join(ids, '', '\n', 0);
}

/** The first ID, as a decimal string. */
export function firstId(ids: IssuedIds): string {
  return ids instanceof BigUint64Array ? ids[0]!.toString() : ids[0]!.first.toString();
}

/** Every ID wrapped in `before` and `after`, with the last `trim` characters dropped. */
function join(ids: IssuedIds, before: string, after: string, trim: number): string {
  // String concatenation builds a rope in V8: cheaper than an array of parts and a join.
  let out = '';
  forEachId(ids, (id) => {
    out += before + id + after;
  });
  return trim > 0 ? out.slice(0, -trim) : out;
}
