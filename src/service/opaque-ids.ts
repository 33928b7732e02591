/**
 * The IDs of an opaque sequence: P(ordered ID) for every ID its cache hands out. IDs are encoded
 * ahead, a few thousand at a time, for requests of up to SMALL_REQUEST_IDS: each AES call of the
 * permutation has a fixed cost of microseconds, so one pass costs about as much for one ID as for
 * hundreds. They are kept written as JSON strings (util/decimal.ts), so a request copies them. With
 * an encoder thread (encoder-thread.ts), the next IDs are encoded and written there while these are
 * handed out, and this thread encodes only when the thread has fallen behind.
 *
 * IDs encoded ahead, or on their way to and from the thread, belong to this process exactly as its
 * cached ranges do: each range is taken from the cache once, encoded once and its IDs handed out
 * once; if the process stops they are lost (a gap). They count as cached, not as issued.
 */
import type { IdPermutation } from 'ticketd-client';
import type { IdRange } from '../core/blocks.js';
import { quoteIds, type QuotedIds } from '../util/decimal.js';

/** IDs encoded ahead at a time on this thread. */
export const ENCODED_AHEAD = 4096;
/** IDs the encoder thread encodes at a time. */
export const ENCODED_IN_BACKGROUND = 16_384;
/**
 * Batches kept on their way through the thread, and at most that many batches' IDs queued here.
 * Its answers wait for this thread's event loop, which under load turns over only every few
 * milliseconds, and 32 connections asking for 1,000 IDs each drain two batches in one turn: with
 * fewer (4 measured, against 8), about one request in six found the queue empty and encoded here.
 */
export const BATCHES_IN_FLIGHT = 8;
/** Requests of up to this many IDs are served from the IDs encoded ahead; larger ones encode their own. */
export const SMALL_REQUEST_IDS = 1024;

/** Opaque IDs written already, as JSON strings each followed by a comma (`"7","12",`), in parts. */
export interface QuotedRun {
  readonly count: number;
  readonly parts: readonly Uint8Array[];
}

/** IDs as the HTTP layer formats them: ordered ranges, opaque IDs one by one, or opaque IDs written already. */
export type IssuedIds = readonly IdRange[] | BigUint64Array | QuotedRun;

/** Ordered ranges taken from a cache without waiting, or undefined when it holds too few. */
export type TakeRanges = (count: number) => IdRange[] | undefined;

/** Encodes ranges elsewhere (the encoder thread) and writes them as JSON strings; rejects when it cannot. */
export type EncodeElsewhere = (ranges: readonly IdRange[]) => Promise<QuotedIds>;

/** Opaque IDs of one sequence. */
export class OpaqueIds {
  readonly ids = 'opaque';
  readonly #permutation: IdPermutation;
  readonly #take: TakeRanges;
  #elsewhere: EncodeElsewhere | undefined;
  /** Encoded IDs not handed out yet, oldest first; #next indexes the first batch's IDs. */
  readonly #queue: QuotedIds[] = [];
  #next = 0;
  #queued = 0;
  /** IDs taken from the cache and on their way through the encoder thread, in how many batches. */
  #inFlight = 0;
  #batchesInFlight = 0;

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
  tryTake(count: number): QuotedRun | BigUint64Array | undefined {
    if (count <= SMALL_REQUEST_IDS) {
      // Without a thread, encode ahead here; with one, leave the cache's IDs to it and encode only what this request needs.
      if (this.#queued < count && this.#elsewhere === undefined) this.#encodeAhead();
      if (this.#queued >= count) {
        const ids = this.#dequeue(count);
        this.#encodeInBackground();
        return ids;
      }
      this.#encodeInBackground();
    }
    const ranges = this.#take(count);
    return ranges && this.encode(ranges);
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

  /** The next `count` queued IDs (there are at least that many): views of the queued bytes, not copies. */
  #dequeue(count: number): QuotedRun {
    const parts: Uint8Array[] = [];
    for (let left = count; left > 0;) {
      const head = this.#queue[0]!;
      const n = Math.min(left, idCount(head) - this.#next);
      // Views: queued batches are never written again once pushed.
      parts.push(head.bytes.subarray(head.starts[this.#next], head.starts[this.#next + n]));
      this.#next += n;
      left -= n;
      if (this.#next === idCount(head)) this.#shift();
    }
    this.#queued -= count;
    return { count, parts };
  }

  #shift(): void {
    this.#queue.shift();
    this.#next = 0;
  }

  /** Encodes the next ENCODED_AHEAD IDs on this thread, when the cache has them. */
  #encodeAhead(): void {
    const ranges = this.#take(ENCODED_AHEAD);
    if (ranges === undefined) return;
    this.#push(quoteIds(this.encode(ranges)));
  }

  /**
   * Keeps up to BATCHES_IN_FLIGHT batches on their way through the encoder thread, while fewer
   * than that many batches' IDs are queued or in flight. A failure there leaves a gap (that
   * batch's IDs), and this thread encodes from then on.
   */
  #encodeInBackground(): void {
    if (
      this.#elsewhere === undefined ||
      this.#batchesInFlight >= BATCHES_IN_FLIGHT ||
      this.#queued + this.#inFlight >= BATCHES_IN_FLIGHT * ENCODED_IN_BACKGROUND
    )
      return;
    // As many as the cache holds now, down to a pass's worth: waiting for a full batch would leave this thread encoding.
    let size = ENCODED_IN_BACKGROUND;
    let ranges = this.#take(size);
    while (ranges === undefined && size > ENCODED_AHEAD) ranges = this.#take((size /= 2));
    if (ranges === undefined) return;
    this.#inFlight += size;
    this.#batchesInFlight++;
    this.#elsewhere(ranges).then(
      (ids) => {
        this.#inFlight -= size;
        this.#batchesInFlight--;
        this.#push(ids);
      },
      () => {
        this.#inFlight -= size;
        this.#batchesInFlight--;
        this.#elsewhere = undefined;
      },
    );
  }

  #push(ids: QuotedIds): void {
    if (idCount(ids) === 0) return;
    this.#queue.push(ids);
    this.#queued += idCount(ids);
  }
}

function idCount(ids: QuotedIds): number {
  return ids.starts.length - 1;
}
