/** IDs issued per second over the last minutes, sampled from the service, for the status page chart. */
import type { Clock } from '../core/clock.js';

/** How often a sample is taken, and how many are kept (10 minutes). */
export const ACTIVITY_SAMPLE_MS = 5000;
export const ACTIVITY_SAMPLES = 120;

/** One point: when, and IDs per second since the previous point. */
export interface ActivityPoint {
  readonly at: number;
  readonly idsPerSecond: number;
}

/** Keeps the last samples of a monotonically growing total (IDs issued by this process). */
export class ActivityHistory {
  readonly #total: () => number;
  readonly #clock: Clock;
  readonly #points: ActivityPoint[] = [];
  #last: { at: number; total: number };
  #timer: NodeJS.Timeout | undefined;

  constructor(total: () => number, clock: Clock = Date.now) {
    this.#total = total;
    this.#clock = clock;
    this.#last = { at: clock(), total: total() };
  }

  /** Takes one sample now. */
  sample(): void {
    const at = this.#clock();
    const total = this.#total();
    const seconds = (at - this.#last.at) / 1000;
    if (seconds <= 0) return;
    this.#points.push({ at, idsPerSecond: Math.max(0, total - this.#last.total) / seconds });
    if (this.#points.length > ACTIVITY_SAMPLES) this.#points.shift();
    this.#last = { at, total };
  }

  /** Samples every ACTIVITY_SAMPLE_MS until stop(); the timer does not keep the process alive. */
  start(): void {
    this.#timer ??= setInterval(() => this.sample(), ACTIVITY_SAMPLE_MS).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** The points, oldest first. */
  points(): readonly ActivityPoint[] {
    return this.#points;
  }
}
