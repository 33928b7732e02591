/**
 * One sequence as this process serves it: its settings, its cache, its capacity view and its codec.
 * This class is their one owner: the service asks it, and only a widening (adopt) changes the
 * settings and the capacity view.
 */
import type { Clock } from '../core/clock.js';
import { DEFAULT_BACKEND_OPTIONS } from '../backend/backend-options.js';
import { RangeCache } from '../cache/range-cache.js';
import type { IdRange } from '../core/blocks.js';
import type { SequenceSettings } from '../core/sequence.js';
import type { Logger } from '../logger.js';
import { CapacityTracker, type CapacityStatus } from './capacity.js';
import type { EncoderThread } from './encoder-thread.js';
import { codecFor, type IdCodec } from './id-codec.js';
import type { Issuer } from './issuer.js';

/** How often a sequence a process serves is read again from the backends (retired? widened?), asked for or not. */
export const SETTINGS_RECHECK_MS = 5000;
/**
 * How soon after a retirement every other process refuses the sequence, idle or busy: the next
 * recheck is sent at most SETTINGS_RECHECK_MS after the last read that found it live, and answers
 * within the query timeout (docs/reference.md, "Retiring").
 */
export const RETIRE_BOUND_MS = SETTINGS_RECHECK_MS + DEFAULT_BACKEND_OPTIONS.queryTimeoutMs;

/** What an entry needs from the service that holds it. */
export interface SequenceEntryOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly encoder: EncoderThread;
  /** Fetches tickets' ranges for this entry (the service's refill, through the allocator). */
  readonly refill: (entry: SequenceEntry, tickets: number, late: (ranges: IdRange[]) => void) => Promise<IdRange[]>;
  readonly onBackgroundError: (error: unknown) => void;
  /** The sequence's issuer, chosen from its kind (issuer.ts). */
  readonly issuer: (entry: SequenceEntry) => Issuer;
}

/** The cache of a sequence as one process sees it. */
export interface CacheStatus {
  readonly available: number;
  readonly issued: number;
  readonly ticketsPerRefill: number;
  readonly exhausted: boolean;
}

/** A sequence this process serves. */
export class SequenceEntry {
  readonly cache: RangeCache;
  /** What turns the cache's ordered IDs into the ones served, chosen once from the sequence's mode. */
  readonly codec: IdCodec;
  /** What issues the sequence's IDs, chosen once from its kind. */
  readonly issuer: Issuer;
  readonly #options: SequenceEntryOptions;
  #settings: SequenceSettings;
  #capacity: CapacityTracker;

  constructor(settings: SequenceSettings, options: SequenceEntryOptions) {
    this.#options = options;
    this.#settings = settings;
    this.#capacity = this.#capacityOf(settings);
    this.cache = new RangeCache({
      sequence: settings.name,
      blockSize: settings.blockSize,
      refill: (tickets, late) => options.refill(this, tickets, late),
      clock: options.clock,
      onBackgroundError: options.onBackgroundError,
    });
    this.codec = codecFor(settings, (n) => this.cache.tryTake(n), options.encoder);
    this.issuer = options.issuer(this);
  }

  get settings(): SequenceSettings {
    return this.#settings;
  }

  /** Records the IDs of fetched ranges in the capacity view. */
  observe(ranges: readonly IdRange[]): void {
    for (const r of ranges) this.#capacity.observe(r.last, r.last - r.first + 1n);
  }

  /** The backends have no ticket left below maxId. */
  markExhausted(): void {
    this.#capacity.markExhausted();
  }

  /** How much of maxId is used, as far as this process has seen; undefined before it fetched any. */
  capacityStatus(): CapacityStatus | undefined {
    return this.#capacity.status();
  }

  /** The sequence's maxId grew: serve up to it from now on (the cache reopens; the capacity view follows). */
  adopt(settings: SequenceSettings): void {
    const highest = this.#capacity.status()?.highestId;
    this.#settings = settings;
    this.#capacity = this.#capacityOf(settings);
    if (highest !== undefined) this.#capacity.observe(BigInt(highest));
    this.cache.reopen();
    this.#options.logger.info(
      { sequence: settings.name, maxId: settings.maxId },
      `sequence ${settings.name} widened to maxId ${settings.maxId}`,
    );
  }

  // IDs an opaque sequence encoded ahead have left the cache but not this process: they count as
  // cached, not as issued.

  /** IDs this process holds for the sequence and has not handed out. */
  get available(): number {
    return this.cache.available + this.codec.ahead;
  }

  /** IDs this process has handed out for the sequence. */
  get issued(): number {
    return this.cache.issued - this.codec.ahead;
  }

  cacheStatus(): CacheStatus {
    return {
      available: this.available,
      issued: this.issued,
      ticketsPerRefill: this.cache.ticketsPerRefill,
      exhausted: this.cache.exhausted,
    };
  }

  #capacityOf(settings: SequenceSettings): CapacityTracker {
    const { name, maxId } = settings;
    return new CapacityTracker(
      maxId,
      this.#options.clock,
      (status) =>
        this.#options.logger.warn(
          { sequence: name, ...status },
          `sequence ${name} is ${status.level}: ${status.usedPercent}% of maxId ${maxId} used`,
        ),
      () => ({ cached: BigInt(this.available), issued: BigInt(this.issued) }),
    );
  }
}
