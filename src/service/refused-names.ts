/**
 * Names refused on loading, when and why (no backend had them, they are retired, or they need a
 * newer ticketd): a burst of requests for one asks MySQL once a second, not once each. Retired ones
 * are also kept for good, for the status page and the metrics.
 */
import type { Clock } from '../core/clock.js';
import { SequenceRetiredError, type TicketdError } from '../core/errors.js';

/** How long a refused name is answered from memory without asking the backends again. */
export const UNKNOWN_SEQUENCE_TTL_MS = 1000;
/** Names remembered at most (the oldest are forgotten first). */
export const MAX_UNKNOWN_SEQUENCES = 10_000;

/** The memo of refused names. */
export class RefusedNames {
  readonly #clock: Clock;
  readonly #refused = new Map<string, { readonly at: number; readonly error: TicketdError }>();
  /** Names found retired: kept for good (status page, metrics); retirement is rare, the cap a guard. */
  readonly #retired = new Set<string>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** The error a name was refused with a moment ago, if any. */
  recent(name: string): TicketdError | undefined {
    const refused = this.#refused.get(name);
    return refused !== undefined && this.#clock() - refused.at < UNKNOWN_SEQUENCE_TTL_MS ? refused.error : undefined;
  }

  remember(name: string, error: TicketdError): void {
    this.#refused.delete(name);
    // Oldest first: a flood of random names cannot grow this without bound.
    if (this.#refused.size >= MAX_UNKNOWN_SEQUENCES) this.#refused.delete(this.#refused.keys().next().value!);
    this.#refused.set(name, { at: this.#clock(), error });
    if (error instanceof SequenceRetiredError && this.#retired.size < MAX_UNKNOWN_SEQUENCES) this.#retired.add(name);
  }

  /** Every name refused as retired so far. */
  retired(): string[] {
    return [...this.#retired];
  }

  forget(name: string): void {
    this.#refused.delete(name);
  }
}
