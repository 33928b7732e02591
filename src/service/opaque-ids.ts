/**
 * The IDs of an opaque sequence: P(ordered ID) for every ID its cache hands out. IDs are encoded
 * ahead, a few thousand at a time, for requests of up to SMALL_REQUEST_IDS: each AES call of the
 * permutation has a fixed cost of microseconds, so one pass costs about as much for one ID as for
 * hundreds. IDs encoded ahead belong to this process exactly as its cached ranges do: used once,
 * and lost (a gap) if it stops. They count as cached, not as issued.
 */
import type { IdPermutation } from 'ticketd-client';
import type { IdRange } from '../core/blocks.js';

/** IDs encoded ahead at a time. */
export const ENCODED_AHEAD = 4096;
/** Requests of up to this many IDs are served from the IDs encoded ahead; larger ones encode their own. */
export const SMALL_REQUEST_IDS = 1024;

/** IDs as the HTTP layer formats them: ordered ranges, or opaque IDs one by one. */
export type IssuedIds = readonly IdRange[] | BigUint64Array;

/** Ordered ranges taken from a cache without waiting, or undefined when it holds too few. */
export type TakeRanges = (count: number) => IdRange[] | undefined;

/** Opaque IDs of one sequence. */
export class OpaqueIds {
  readonly ids = 'opaque';
  readonly #permutation: IdPermutation;
  readonly #take: TakeRanges;
  #ahead = new BigUint64Array(0);
  #next = 0;

  /** `take` gives ordered ranges from the sequence's cache without waiting. */
  constructor(permutation: IdPermutation, take: TakeRanges) {
    this.#permutation = permutation;
    this.#take = take;
  }

  /** P⁻¹: the ordered ID behind an opaque one. */
  decode(id: bigint): bigint {
    return this.#permutation.decode(id);
  }

  /** IDs taken from the cache and encoded, not yet handed out. */
  get ahead(): number {
    return this.#ahead.length - this.#next;
  }

  /** `count` opaque IDs without waiting, or undefined when the cache cannot cover them. */
  tryTake(count: number): BigUint64Array | undefined {
    if (count > SMALL_REQUEST_IDS || (this.ahead < count && !this.#encodeAhead())) {
      const ranges = this.#take(count);
      return ranges && this.encode(ranges);
    }
    const ids = this.#ahead.slice(this.#next, this.#next + count);
    this.#next += count;
    return ids;
  }

  /** P of every ID of the ranges, in order. */
  encode(ranges: readonly IdRange[]): BigUint64Array {
    let total = 0;
    for (const r of ranges) total += Number(r.last - r.first + 1n);
    const out = new BigUint64Array(total);
    let at = 0;
    for (const r of ranges) {
      const count = Number(r.last - r.first + 1n);
      this.#permutation.encodeRun(r.first, count, out, at);
      at += count;
    }
    return out;
  }

  /** Encodes the next ENCODED_AHEAD IDs, keeping the ones still unused; false when the cache has too few. */
  #encodeAhead(): boolean {
    const ranges = this.#take(ENCODED_AHEAD);
    if (ranges === undefined) return false;
    const left = this.#ahead.subarray(this.#next);
    const fresh = this.encode(ranges);
    const ahead = new BigUint64Array(left.length + fresh.length);
    ahead.set(left, 0);
    ahead.set(fresh, left.length);
    this.#ahead = ahead;
    this.#next = 0;
    return true;
  }
}
