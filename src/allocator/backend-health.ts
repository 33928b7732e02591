/** Whether a backend should be asked for tickets now: up, or down until a backoff expires. */

/** Milliseconds since some epoch; injected so tests control time. */
export type Clock = () => number;
/** A number in [0, 1); injected so backoff jitter is reproducible in tests. */
export type Random = () => number;

/** Backoff after the first failure, doubled per further failure up to the cap. */
export const DOWN_BACKOFF_INITIAL_MS = 200;
/** Longest a failing backend is left alone before it is tried again. */
export const DOWN_BACKOFF_MAX_MS = 5000;

/** State shown in GET /v1/sequences/{name} and /readyz. */
export type HealthState = 'unknown' | 'up' | 'down';

/** Tracks one backend's failures. */
export class BackendHealth {
  readonly #clock: Clock;
  readonly #random: Random;
  #state: HealthState = 'unknown';
  #failures = 0;
  #retryAt = 0;
  #lastError: string | undefined;

  constructor(clock: Clock, random: Random) {
    this.#clock = clock;
    this.#random = random;
  }

  /** True unless the backend failed recently and its backoff has not run out. */
  get available(): boolean {
    return this.#state !== 'down' || this.#clock() >= this.#retryAt;
  }

  get state(): HealthState {
    return this.#state;
  }

  get lastError(): string | undefined {
    return this.#lastError;
  }

  /** Milliseconds until a down backend may be tried again (0 when available). */
  get retryInMs(): number {
    return this.available ? 0 : this.#retryAt - this.#clock();
  }

  /** Records an answer; returns true when this changes the state. */
  recordSuccess(): boolean {
    const changed = this.#state !== 'up';
    this.#state = 'up';
    this.#failures = 0;
    return changed;
  }

  /** Records a failure and schedules the next try with jittered exponential backoff. */
  recordFailure(error: unknown): boolean {
    const changed = this.#state !== 'down';
    this.#state = 'down';
    this.#failures++;
    const ceiling = Math.min(DOWN_BACKOFF_MAX_MS, DOWN_BACKOFF_INITIAL_MS * 2 ** (this.#failures - 1));
    // Full jitter in the upper half: spreads probes from many processes, never retries at once.
    this.#retryAt = this.#clock() + ceiling / 2 + (this.#random() * ceiling) / 2;
    this.#lastError = error instanceof Error ? error.message : String(error);
    return changed;
  }
}
