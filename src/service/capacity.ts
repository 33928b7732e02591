/**
 * How much of a sequence's maxId is used, how fast, and when it runs out, as one process sees it:
 * the frontier is the highest ID of any ticket this process has fetched. Ticket numbers are shared
 * by every process, so its growth shows the whole fleet's rate (capacity-forecast.ts says how).
 */
import type { Clock } from '../core/clock.js';
import { CAPACITY_WINDOW_MS, forecast, type CapacitySample } from './capacity-forecast.js';

/** Fractions of maxId at which a sequence is logged once and shown as warning / critical. */
export const CAPACITY_WARNING_RATIO = 0.8;
export const CAPACITY_CRITICAL_RATIO = 0.95;
/** Samples are taken at most this often. */
export const CAPACITY_SAMPLE_INTERVAL_MS = 1000;

/** ok below 80% of maxId, warning from 80%, critical from 95%, exhausted when no ID is left. */
export type CapacityLevel = 'ok' | 'warning' | 'critical' | 'exhausted';

/** The capacity of one sequence as JSON: IDs as decimal strings, times as ISO 8601. */
export interface CapacityStatus {
  readonly level: CapacityLevel;
  /** Highest ID fetched so far, as a percentage of maxId. */
  readonly usedPercent: number;
  readonly highestId: string;
  /** Of maxId's range per second, as the fleet takes it over the last 5 minutes (capacity-forecast.ts); null in the first seconds. */
  readonly idsPerSecond: number | null;
  /** Seconds until the sequence answers exhausted at that rate: 0 once exhausted, null without a rate (none yet, or 0). */
  readonly secondsLeft: number | null;
  /** When it does; null without a rate or past the last instant a Date holds. */
  readonly projectedExhaustionAt: string | null;
}

/** The last instant a JavaScript Date can represent. */
const MAX_DATE_MS = 8.64e15;

/** What the tracker reads of the process's cache for the sequence, at any instant. */
export interface CacheCounts {
  /** IDs held and not handed out. */
  readonly cached: bigint;
  /** IDs handed out so far. */
  readonly issued: bigint;
}

/** Tracks one sequence; calls onLevel once each time it enters a higher level. */
export class CapacityTracker {
  readonly #maxId: bigint;
  readonly #clock: Clock;
  readonly #onLevel: (status: CapacityStatus) => void;
  readonly #counts: () => CacheCounts;
  readonly #samples: CapacitySample[] = [];
  #frontier = 0n;
  #fetched = 0n;
  #exhausted = false;
  #reported: CapacityLevel = 'ok';

  /** `counts`: the process's cache of the sequence (none: the forecast takes the frontier as handed out). */
  constructor(
    maxId: bigint,
    clock: Clock,
    onLevel: (status: CapacityStatus) => void,
    counts: () => CacheCounts = () => ({ cached: 0n, issued: this.#fetched }),
  ) {
    this.#maxId = maxId;
    this.#clock = clock;
    this.#onLevel = onLevel;
    this.#counts = counts;
  }

  /** Records a fetched range, `ids` IDs up to `lastId`, before it joins the cache. */
  observe(lastId: bigint, ids = 1n): void {
    // Sampled before the range is counted: the cache does not hold it yet either. The first fetch
    // has no frontier before it: the first sample is taken after it.
    const first = this.#frontier === 0n;
    if (!first) this.#sample(this.#clock());
    this.#fetched += ids;
    if (lastId <= this.#frontier) return;
    this.#frontier = lastId;
    if (first) this.#sample(this.#clock());
    this.#report();
  }

  /** Records that the backends have no ticket left below maxId. */
  markExhausted(): void {
    this.#exhausted = true;
    this.#report();
  }

  /** The current view; undefined before the first fetch. */
  status(): CapacityStatus | undefined {
    // A sample between fetches too: a window without fetches then reads as no rate, not the last one.
    if (this.#frontier > 0n) this.#sample(this.#clock());
    return this.#view();
  }

  #view(): CapacityStatus | undefined {
    if (this.#frontier === 0n && !this.#exhausted) return undefined;
    const ratio = Number((this.#frontier * 1_000_000n) / this.#maxId) / 1_000_000;
    const level: CapacityLevel = this.#exhausted
      ? 'exhausted'
      : ratio >= CAPACITY_CRITICAL_RATIO
        ? 'critical'
        : ratio >= CAPACITY_WARNING_RATIO
          ? 'warning'
          : 'ok';
    const now = this.#now(this.#clock());
    const { idsPerSecond, secondsLeft } = forecast(this.#samples, now, this.#maxId, this.#counts().cached);
    const left = this.#exhausted ? 0 : secondsLeft === null ? null : Math.round(secondsLeft * 10) / 10;
    const at = left === null || this.#exhausted ? undefined : now.at + left * 1000;
    return {
      level,
      usedPercent: Math.round(ratio * 100_000) / 1000,
      highestId: String(this.#frontier),
      idsPerSecond: idsPerSecond === null ? null : Math.round(idsPerSecond * 1000) / 1000,
      secondsLeft: left,
      // 2^64 IDs at a few per second is far past the last instant a Date can hold.
      projectedExhaustionAt: at === undefined || at > MAX_DATE_MS ? null : new Date(at).toISOString(),
    };
  }

  #now(at: number): CapacitySample {
    return { at, frontier: this.#frontier, fetched: this.#fetched, issued: this.#counts().issued };
  }

  /**
   * At most once a second. An older sample goes once the next one can anchor every later rate
   * (anchorOf); of a run without fetches only its first and last are kept.
   */
  #sample(at: number): void {
    const samples = this.#samples;
    const latest = samples[samples.length - 1];
    if (latest !== undefined && at - latest.at < CAPACITY_SAMPLE_INTERVAL_MS) return;
    const next = this.#now(at);
    const before = samples[samples.length - 2];
    if (before?.frontier === next.frontier && latest?.frontier === next.frontier) samples.pop();
    samples.push(next);
    while (samples.length > 1 && at - samples[1]!.at >= CAPACITY_WINDOW_MS && samples[1]!.frontier < this.#frontier)
      samples.shift();
  }

  #report(): void {
    // Inside a fetch, before its ranges join the cache: a view, no sample.
    const status = this.#view();
    if (status === undefined || rank(status.level) <= rank(this.#reported)) return;
    this.#reported = status.level;
    this.#onLevel(status);
  }
}

function rank(level: CapacityLevel): number {
  return ['ok', 'warning', 'critical', 'exhausted'].indexOf(level);
}
