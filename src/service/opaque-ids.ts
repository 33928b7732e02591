/**
 * The IDs of an opaque sequence: P(ordered ID) for every ID its cache hands out. IDs are encoded
 * ahead, a few thousand at a time, for requests of up to SMALL_REQUEST_IDS: each AES call of the
 * permutation has a fixed cost of microseconds, so one pass costs about as much for one ID as for
 * hundreds. With an encoder thread (encoder-thread.ts), the next IDs are encoded there while these
 * are handed out, and this thread encodes only when the thread has fallen behind.
 *
 * IDs encoded ahead, or on their way to and from the thread, belong to this process exactly as its
 * cached ranges do: each range is taken from the cache once, encoded once and its IDs handed out
 * once; if the process stops they are lost (a gap). They count as cached, not as issued.
 */
import type { IdPermutation } from 'ticketd-client';
import type { IdRange } from '../core/blocks.js';

/** IDs encoded ahead at a time on this thread. */
export const ENCODED_AHEAD = 4096;
/** IDs the encoder thread encodes at a time, asked for when fewer than this are left ahead. */
export const ENCODED_IN_BACKGROUND = 16_384;
/** Requests of up to this many IDs are served from the IDs encoded ahead; larger ones encode their own. */
export const SMALL_REQUEST_IDS = 1024;

/** IDs as the HTTP layer formats them: ordered ranges, or opaque IDs one by one. */
export type IssuedIds = readonly IdRange[] | BigUint64Array;

/** Ordered ranges taken from a cache without waiting, or undefined when it holds too few. */
export type TakeRanges = (count: number) => IdRange[] | undefined;

/** Encodes ranges elsewhere (the encoder thread); rejects when it cannot. */
export type EncodeElsewhere = (ranges: readonly IdRange[]) => Promise<BigUint64Array>;

/** Opaque IDs of one sequence. */
export class OpaqueIds {
  readonly ids = 'opaque';
  readonly #permutation: IdPermutation;
  readonly #take: TakeRanges;
  #elsewhere: EncodeElsewhere | undefined;
  /** Encoded IDs not handed out yet, oldest first; #next indexes the first array. */
  readonly #queue: BigUint64Array[] = [];
  #next = 0;
  #queued = 0;
  /** IDs taken from the cache and on their way through the encoder thread. */
  #inFlight = 0;

  /** `take` gives ordered ranges from the sequence's cache without waiting. */
  constructor(permutation: IdPermutation, take: TakeRanges, elsewhere?: EncodeElsewhere) {
    this.#permutation = permutation;
    this.#take = take;
    this.#elsewhere = elsewhere;
  }

  /** P⁻¹: the ordered ID behind an opaque one. */
  decode(id: bigint): bigint {
    return this.#permutation.decode(id);
  }

  /** IDs taken from the cache and encoded (or being encoded), not yet handed out. */
  get ahead(): number {
    return this.#queued + this.#inFlight;
  }

  /** `count` opaque IDs without waiting, or undefined when the cache cannot cover them. */
  tryTake(count: number): BigUint64Array | undefined {
    if (count > SMALL_REQUEST_IDS || (this.#queued < count && !this.#encodeAhead())) {
      const ranges = this.#take(count);
      return ranges && this.encode(ranges);
    }
    const ids = this.#dequeue(count);
    if (this.#queued + this.#inFlight < ENCODED_IN_BACKGROUND) this.#encodeInBackground();
    return ids;
  }

  /** P of every ID of the ranges, in order, on this thread. */
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

  /** The next `count` queued IDs (there are at least that many). */
  #dequeue(count: number): BigUint64Array {
    const head = this.#queue[0]!;
    let ids: BigUint64Array;
    if (head.length - this.#next >= count) {
      // A view, not a copy: queued arrays are never written again once pushed.
      ids = head.subarray(this.#next, this.#next + count);
      this.#next += count;
    } else {
      ids = new BigUint64Array(count);
      for (let at = 0; at < count; ) {
        const first = this.#queue[0]!;
        const n = Math.min(count - at, first.length - this.#next);
        ids.set(first.subarray(this.#next, this.#next + n), at);
        at += n;
        this.#next += n;
        if (this.#next === first.length) this.#shift();
      }
    }
    if (this.#queue.length > 0 && this.#next === this.#queue[0]!.length) this.#shift();
    this.#queued -= count;
    return ids;
  }

  #shift(): void {
    this.#queue.shift();
    this.#next = 0;
  }

  /** Encodes the next ENCODED_AHEAD IDs on this thread; false when the cache has too few. */
  #encodeAhead(): boolean {
    const ranges = this.#take(ENCODED_AHEAD);
    if (ranges === undefined) return false;
    this.#push(this.encode(ranges));
    return true;
  }

  /** Asks the encoder thread for the next IDs, one batch at a time. A failure there leaves a gap, and this thread encodes from then on. */
  #encodeInBackground(): void {
    if (this.#elsewhere === undefined || this.#inFlight > 0) return;
    const ranges = this.#take(ENCODED_IN_BACKGROUND);
    if (ranges === undefined) return;
    this.#inFlight = ENCODED_IN_BACKGROUND;
    this.#elsewhere(ranges).then(
      (ids) => {
        this.#inFlight = 0;
        this.#push(ids);
      },
      () => {
        this.#inFlight = 0;
        this.#elsewhere = undefined;
      },
    );
  }

  #push(ids: BigUint64Array): void {
    if (ids.length === 0) return;
    this.#queue.push(ids);
    this.#queued += ids.length;
  }
}
