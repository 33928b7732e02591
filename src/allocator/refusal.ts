/**
 * A backend that answers but refuses what its account may not do (a missing GRANT): not an outage.
 * Its breaker stays as it is; the refusal is a state of its own, shown as `refused` for as long as
 * refusals keep coming (each one holds it REFUSAL_HOLD_MS), logged once per episode and reason.
 */
import type { Clock } from '../core/clock.js';

/** How long one refusal keeps the backend shown as refused. */
export const REFUSAL_HOLD_MS = 60_000;

/** The refusals of one backend. */
export class GrantRefusals {
  readonly #clock: Clock;
  #since: number | undefined;
  #lastAt = Number.NEGATIVE_INFINITY;
  #reason = '';

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Notes a refusal; true when it starts an episode or gives another reason (worth a log line). */
  note(reason: string): boolean {
    const now = this.#clock();
    const fresh = !this.active;
    if (fresh) this.#since = now;
    const changed = fresh || reason !== this.#reason;
    this.#lastAt = now;
    this.#reason = reason;
    return changed;
  }

  /** The account was asked again and is still refused: the episode goes on, for the same reason. */
  renew(): void {
    if (this.active) this.#lastAt = this.#clock();
  }

  /** The account was asked again and is refused nothing now (a GRANT was made): the episode ends. */
  clear(): void {
    this.#since = undefined;
    this.#lastAt = Number.NEGATIVE_INFINITY;
  }

  /** True while the last refusal is at most REFUSAL_HOLD_MS old. */
  get active(): boolean {
    return this.#clock() - this.#lastAt <= REFUSAL_HOLD_MS;
  }

  /** When the last refusal came (clock time), while active. */
  get lastAt(): number | undefined {
    return this.active ? this.#lastAt : undefined;
  }

  /** The server's words for the last refusal, while active. */
  get reason(): string | undefined {
    return this.active ? this.#reason : undefined;
  }

  /**
   * True while refused with no ticket fetched since the episode began: the refusals then stand
   * between the backend and every ID it could issue (a REPLACE refused), not beside them (a statement of one feature).
   */
  blocksIssuing(lastFetchAt: number): boolean {
    return this.active && this.#since !== undefined && lastFetchAt < this.#since;
  }
}
