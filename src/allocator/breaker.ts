/**
 * A circuit breaker per backend. Closed ('up', or 'down' after a failure below the threshold):
 * the backend is asked. Open: it is skipped, and a background probe is due once a jittered,
 * exponentially growing backoff runs out. Half-open: the probe is in flight.
 */
import { errorText } from '../util/error-text.js';
import type { Clock, Random } from '../core/clock.js';

/** State shown in GET /v1/sequences/{name}, /readyz and the metrics. */
export type BreakerState = 'unknown' | 'up' | 'down' | 'open' | 'half-open';

/** Tuning of a breaker. */
export interface BreakerOptions {
  /** Consecutive failures that open the breaker. */
  readonly failureThreshold: number;
  /** Backoff before the first probe; doubled per failed probe. */
  readonly initialBackoffMs: number;
  /** Longest wait between probes. */
  readonly maxBackoffMs: number;
}

/** Defaults: open on the second failure in a row, probe within 0.1–0.2 s, then at most every 2 s. */
export const DEFAULT_BREAKER_OPTIONS: BreakerOptions = Object.freeze({
  failureThreshold: 2,
  initialBackoffMs: 200,
  maxBackoffMs: 2000,
});

/** The breaker of one backend. */
export class Breaker {
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #options: BreakerOptions;
  #state: BreakerState = 'unknown';
  #consecutiveFailures = 0;
  #openings = 0;
  #probeAt = 0;
  #lastError: string | undefined;
  #lastErrorAt: number | undefined;
  #changedAt: number;

  constructor(clock: Clock, random: Random, options: BreakerOptions = DEFAULT_BREAKER_OPTIONS) {
    this.#clock = clock;
    this.#random = random;
    this.#options = options;
    this.#changedAt = clock();
  }

  get state(): BreakerState {
    return this.#state;
  }

  /** True while requests may be sent (closed); false while open or probing. */
  get closed(): boolean {
    return this.#state === 'unknown' || this.#state === 'up' || this.#state === 'down';
  }

  get lastError(): string | undefined {
    return this.#lastError;
  }

  /** When the last error happened (clock time): an error read without its time reads as current. */
  get lastErrorAt(): number | undefined {
    return this.#lastErrorAt;
  }

  /** When the state last changed (clock time). */
  get changedAt(): number {
    return this.#changedAt;
  }

  /** Milliseconds until the next probe is due (0 unless open). */
  get probeInMs(): number {
    return this.#state === 'open' ? Math.max(0, this.#probeAt - this.#clock()) : 0;
  }

  /** Records an answer; returns the previous state. */
  recordSuccess(): BreakerState {
    const previous = this.#state;
    this.#consecutiveFailures = 0;
    this.#openings = 0;
    this.#set('up');
    return previous;
  }

  /** Records a failure; opens after the threshold, or at once when a probe fails. Returns the previous state. */
  recordFailure(error: unknown): BreakerState {
    const previous = this.#state;
    this.#lastError = errorText(error);
    this.#lastErrorAt = this.#clock();
    this.#consecutiveFailures++;
    if (
      previous === 'half-open' ||
      previous === 'open' ||
      this.#consecutiveFailures >= this.#options.failureThreshold
    ) {
      this.#open();
    } else {
      this.#set('down');
    }
    return previous;
  }

  /** Opens the breaker now, whatever the count (a backend that must not be used until probed). */
  trip(error: unknown): void {
    this.#lastError = errorText(error);
    this.#lastErrorAt = this.#clock();
    this.#open();
  }

  /** Starts a probe: open → half-open. Returns false when none is due (unless forced) or one runs. */
  beginProbe(force = false): boolean {
    if (this.#state !== 'open' || (!force && this.#clock() < this.#probeAt)) return false;
    this.#set('half-open');
    return true;
  }

  #open(): void {
    this.#openings++;
    const ceiling = Math.min(this.#options.maxBackoffMs, this.#options.initialBackoffMs * 2 ** (this.#openings - 1));
    // Jitter over the upper half: probes from many processes spread out, yet never come too soon.
    this.#probeAt = this.#clock() + ceiling / 2 + (this.#random() * ceiling) / 2;
    this.#set('open');
  }

  #set(state: BreakerState): void {
    if (state !== this.#state) this.#changedAt = this.#clock();
    this.#state = state;
  }
}
