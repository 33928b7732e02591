/**
 * How much of a sequence's maxId is used, how fast, and when it runs out. The frontier is the
 * highest ID of any ticket this process has fetched: ticket numbers are shared by every process,
 * so its growth over time shows the whole fleet's rate, not only this process's.
 */
import type { Clock } from '../core/clock.js';

/** Fractions of maxId at which a sequence is logged once and shown as warning / critical. */
export const CAPACITY_WARNING_RATIO = 0.8;
export const CAPACITY_CRITICAL_RATIO = 0.95;
/** Rate samples are kept this long, and taken at most this often. */
export const CAPACITY_WINDOW_MS = 10 * 60_000;
export const CAPACITY_SAMPLE_INTERVAL_MS = 1000;

/** ok below 80% of maxId, warning from 80%, critical from 95%, exhausted when no ID is left. */
export type CapacityLevel = 'ok' | 'warning' | 'critical' | 'exhausted';

/** The capacity of one sequence as JSON: IDs as decimal strings, times as ISO 8601. */
export interface CapacityStatus {
  readonly level: CapacityLevel;
  /** Highest ID fetched so far, as a percentage of maxId. */
  readonly usedPercent: number;
  readonly highestId: string;
  /** IDs per second by which the frontier moved over the last minutes; null until measured. */
  readonly idsPerSecond: number | null;
  /** When maxId is reached at that rate; null without a rate. */
  readonly projectedExhaustionAt: string | null;
}

/** The last instant a JavaScript Date can represent. */
const MAX_DATE_MS = 8.64e15;

interface Sample {
  readonly at: number;
  readonly frontier: bigint;
}

/** Tracks one sequence; calls onLevel once each time it enters a higher level. */
export class CapacityTracker {
  readonly #maxId: bigint;
  readonly #clock: Clock;
  readonly #onLevel: (status: CapacityStatus) => void;
  readonly #samples: Sample[] = [];
  #frontier = 0n;
  #exhausted = false;
  #reported: CapacityLevel = 'ok';

  constructor(maxId: bigint, clock: Clock, onLevel: (status: CapacityStatus) => void) {
    this.#maxId = maxId;
    this.#clock = clock;
    this.#onLevel = onLevel;
  }

  /** Records the last ID of a fetched range. */
  observe(lastId: bigint): void {
    if (lastId <= this.#frontier) return;
    this.#frontier = lastId;
    const now = this.#clock();
    const latest = this.#samples[this.#samples.length - 1];
    if (latest === undefined || now - latest.at >= CAPACITY_SAMPLE_INTERVAL_MS)
      this.#samples.push({ at: now, frontier: lastId });
    while (this.#samples.length > 2 && now - this.#samples[0]!.at > CAPACITY_WINDOW_MS) this.#samples.shift();
    this.#report();
  }

  /** Records that the backends have no ticket left below maxId. */
  markExhausted(): void {
    this.#exhausted = true;
    this.#report();
  }

  /** The current view; undefined before the first fetch. */
  status(): CapacityStatus | undefined {
    if (this.#frontier === 0n && !this.#exhausted) return undefined;
    const ratio = Number((this.#frontier * 1_000_000n) / this.#maxId) / 1_000_000;
    const level: CapacityLevel = this.#exhausted
      ? 'exhausted'
      : ratio >= CAPACITY_CRITICAL_RATIO
        ? 'critical'
        : ratio >= CAPACITY_WARNING_RATIO
          ? 'warning'
          : 'ok';
    const rate = this.#rate();
    return {
      level,
      usedPercent: Math.round(ratio * 100_000) / 1000,
      highestId: String(this.#frontier),
      idsPerSecond: rate,
      projectedExhaustionAt: this.#exhausted ? null : this.#projection(rate),
    };
  }

  #projection(rate: number | null): string | null {
    if (rate === null || rate <= 0) return null;
    const at = this.#clock() + (Number(this.#maxId - this.#frontier) / rate) * 1000;
    // 2^64 IDs at a few per second is far past the last instant a Date can hold.
    return at <= MAX_DATE_MS ? new Date(at).toISOString() : null;
  }

  #rate(): number | null {
    const first = this.#samples[0];
    const last = this.#samples[this.#samples.length - 1];
    if (first === undefined || last === undefined || last.at <= first.at) return null;
    return Number(last.frontier - first.frontier) / ((last.at - first.at) / 1000);
  }

  #report(): void {
    const status = this.status();
    if (status === undefined || rank(status.level) <= rank(this.#reported)) return;
    this.#reported = status.level;
    this.#onLevel(status);
  }
}

function rank(level: CapacityLevel): number {
  return ['ok', 'warning', 'critical', 'exhausted'].indexOf(level);
}
