/**
 * Cached ID ranges of one sequence, double-buffered: once about 10% of the newest segment is
 * used, the next segment is fetched in the background, so a request waits on MySQL only when both
 * are empty. The segment size adapts so that a steady load refills about once per target interval.
 * IDs handed out are removed before they are returned and never put back: a crash leaves gaps only.
 * A clean stop may surrender what is left (closing the cache for takes first), for the caller to give
 * back (allocator/range-returns.ts).
 */
import { BackendsUnavailableError, SequenceExhaustedError } from '../core/errors.js';
import type { IdRange } from '../core/blocks.js';
import type { Clock } from '../core/clock.js';

/** Fraction of a segment used before the next one is fetched. */
export const PREFETCH_AT_USED_RATIO = 0.1;
/**
 * A steady load should trigger a refill about this often; faster means segments grow. Two seconds
 * keeps about two seconds of demand cached, enough to ride out a backend that hangs.
 */
export const TARGET_REFILL_INTERVAL_MS = 2000;
/** Upper bound on tickets per refill (split across backends). */
export const MAX_TICKETS_PER_REFILL = 256;

/** Dependencies and tuning of a cache. */
export interface RangeCacheOptions {
  readonly sequence: string;
  readonly blockSize: bigint;
  /**
   * Fetches about this many tickets' worth of ranges; rejects when none can be had. Ranges that
   * arrive after it resolved (from a slow backend) are passed to `late`.
   */
  readonly refill: (tickets: number, late: (ranges: IdRange[]) => void) => Promise<IdRange[]>;
  readonly clock: Clock;
  /** Told about failures of background prefetches (foreground failures reach the caller). */
  readonly onBackgroundError: (error: unknown) => void;
  readonly targetRefillIntervalMs?: number;
  readonly maxTicketsPerRefill?: number;
}

interface Cursor {
  next: bigint;
  readonly last: bigint;
  /** The range's generation (core/returned-ranges.ts): what its tail is keyed by when given back. */
  readonly generation: number | undefined;
}

/** How long an exhausted sequence is answered from memory before a refill asks the backends again. */
export const EXHAUSTED_RECHECK_MS = 5000;

/** The ID cache of one sequence. */
export class RangeCache {
  readonly #options: RangeCacheOptions;
  readonly #queue: Cursor[] = [];
  #available = 0;
  #prefetchBelow = 0;
  #ticketsPerRefill = 1;
  #refilling: Promise<void> | undefined;
  #lastRefillAt = Number.NEGATIVE_INFINITY;
  #exhausted: SequenceExhaustedError | undefined;
  /** When the backends last said the sequence had no tickets left (its maxId may grow since). */
  #exhaustedAt = Number.NEGATIVE_INFINITY;
  #issued = 0;
  #refills = 0;
  /** Set by surrender(): nothing more is taken from this cache, and ranges that arrive late are dropped (a gap). */
  #closed = false;

  constructor(options: RangeCacheOptions) {
    this.#options = options;
  }

  /** IDs cached and not yet handed out. */
  get available(): number {
    return this.#available;
  }

  /** IDs handed out by this cache since it was created. */
  get issued(): number {
    return this.#issued;
  }

  /** Tickets the next refill will ask for (grows and shrinks with demand). */
  get ticketsPerRefill(): number {
    return this.#ticketsPerRefill;
  }

  /** True once the sequence can give no more IDs beyond what is cached. */
  get exhausted(): boolean {
    return this.#exhausted !== undefined;
  }

  /**
   * Closes the cache for takes, then hands over what it holds: the unused part of every range, with
   * its generation, for the caller to give back. Synchronous, so no take can slip in between.
   */
  surrender(): IdRange[] {
    this.#closed = true;
    const left = this.#queue.splice(0).map((c) => ({ first: c.next, last: c.last, generation: c.generation ?? 0 }));
    this.#available = 0;
    return left;
  }

  /** Takes `count` IDs without waiting, or returns undefined when fewer are cached. */
  tryTake(count: number): IdRange[] | undefined {
    if (count > this.#available) {
      this.#prefetch();
      return undefined;
    }
    const taken: IdRange[] = [];
    let needed = BigInt(count);
    while (needed > 0n) {
      const head = this.#queue[0] as Cursor;
      const left = head.last - head.next + 1n;
      if (left > needed) {
        taken.push({ first: head.next, last: head.next + needed - 1n });
        head.next += needed;
        break;
      }
      taken.push({ first: head.next, last: head.last });
      this.#queue.shift();
      needed -= left;
    }
    this.#available -= count;
    this.#issued += count;
    if (this.#available < this.#prefetchBelow) this.#prefetch();
    return taken;
  }

  /** Takes `count` IDs, waiting for refills only when the cache cannot cover them. */
  async take(count: number): Promise<IdRange[]> {
    return this.tryTake(count) ?? this.afterMiss(count);
  }

  /** Takes `count` IDs when tryTake just found too few: refills first, then takes (a miss is tried once). */
  async afterMiss(count: number): Promise<IdRange[]> {
    for (;;) {
      if (
        this.#exhausted !== undefined &&
        this.#refilling === undefined &&
        this.#options.clock() - this.#exhaustedAt >= EXHAUSTED_RECHECK_MS
      ) {
        // A widened maxId (PATCH, in any process) is found by the refill that asks again.
        this.reopen();
      } else if (this.#exhausted !== undefined && this.#refilling === undefined) {
        throw new SequenceExhaustedError(
          `sequence ${this.#options.sequence} has ${this.#available} IDs left below its maxId; ${count} were asked for`,
          { cause: this.#exhausted },
        );
      }
      const missing = BigInt(count - this.#available);
      const blockSize = this.#options.blockSize;
      try {
        await this.#refill(Number((missing + blockSize - 1n) / blockSize));
      } catch (error) {
        // Exhaustion is reported on the next turn, with what is left; other failures go to the caller.
        if (!(error instanceof SequenceExhaustedError)) throw error;
      }
      const taken = this.tryTake(count);
      if (taken !== undefined) return taken;
    }
  }

  /** The sequence may have tickets again (its maxId grew): the next refill asks the backends. */
  reopen(): void {
    this.#exhausted = undefined;
  }

  #prefetch(): void {
    if (this.#refilling !== undefined || this.#exhausted !== undefined || this.#closed) return;
    this.#refill(0).catch(this.#options.onBackgroundError);
  }

  #refill(minTickets: number): Promise<void> {
    if (this.#closed)
      return Promise.reject(
        new BackendsUnavailableError(`sequence ${this.#options.sequence}: this process is stopping; ask another`),
      );
    if (this.#refilling !== undefined) return this.#refilling;
    if (this.#exhausted !== undefined) return Promise.reject(this.#exhausted);
    this.#adapt();
    const max = this.#options.maxTicketsPerRefill ?? MAX_TICKETS_PER_REFILL;
    const tickets = Math.min(max, Math.max(this.#ticketsPerRefill, minTickets));
    // Blocks of one refill arrive in chunks, most of them after it resolved; all of them make up
    // the new segment, whose size sets the next prefetch point.
    const refill = ++this.#refills;
    let segment = 0;
    const append = (ranges: IdRange[]): void => {
      segment += this.#append(ranges);
      if (refill === this.#refills) this.#prefetchBelow = segment * (1 - PREFETCH_AT_USED_RATIO);
    };
    this.#refilling = this.#options
      .refill(tickets, append)
      .then(append, (error: unknown) => {
        if (error instanceof SequenceExhaustedError) {
          this.#exhausted = error;
          this.#exhaustedAt = this.#options.clock();
        }
        throw error;
      })
      .finally(() => {
        this.#refilling = undefined;
      });
    return this.#refilling;
  }

  #adapt(): void {
    const now = this.#options.clock();
    const interval = now - this.#lastRefillAt;
    const target = this.#options.targetRefillIntervalMs ?? TARGET_REFILL_INTERVAL_MS;
    const max = this.#options.maxTicketsPerRefill ?? MAX_TICKETS_PER_REFILL;
    if (interval < target) this.#ticketsPerRefill = Math.min(max, this.#ticketsPerRefill * 2);
    else if (interval > 8 * target) this.#ticketsPerRefill = Math.max(1, Math.floor(this.#ticketsPerRefill / 2));
    this.#lastRefillAt = now;
  }

  /** Queues ranges; returns how many IDs they hold. */
  #append(ranges: IdRange[]): number {
    let added = 0;
    if (this.#closed) return 0;
    for (const range of ranges) {
      this.#queue.push({ next: range.first, last: range.last, generation: range.generation });
      added += Number(range.last - range.first + 1n);
    }
    this.#available += added;
    return added;
  }
}
