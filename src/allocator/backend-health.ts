/**
 * Backend health: every call's outcome goes to the backend's circuit breaker, state changes are
 * logged once with their reason, and an open breaker is probed in the background until it closes.
 */
import { BackendMisconfiguredError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Clock } from './breaker.js';
import type { Slot } from './slot.js';

/** Least time between two probes of one backend forced by requests while every backend is open. */
export const DEMAND_PROBE_INTERVAL_MS = 100;

/** Records outcomes and runs probes for the allocator's slots. */
export class BackendHealth {
  readonly #logger: Logger;
  readonly #clock: Clock;
  #closed = false;

  constructor(logger: Logger, clock: Clock) {
    this.#logger = logger;
    this.#clock = clock;
  }

  /** A call to the backend succeeded. */
  recordSuccess(slot: Slot): void {
    const previous = slot.breaker.recordSuccess();
    if (previous === 'up') return;
    // Rejoining after an outage: recordFailure has already made it prepare again before its next use.
    // The first answer after start is no change of state worth a line at info.
    const level = previous === 'unknown' ? 'debug' : 'info';
    this.#logger[level]({ backend: slot.backend.label, was: previous }, 'backend up');
  }

  /**
   * A call to the backend failed; a misconfiguration trips the breaker at once. Whatever failed (a
   * broken connection, a timeout), the server behind the address may not be the one it was: its
   * sequences are prepared again (claims read, counter checked) before its next tickets are used.
   * The connection that failed is destroyed, and a new one is checked before its first use.
   */
  recordFailure(slot: Slot, error: unknown): void {
    slot.stats.failures++;
    slot.prepared.clear();
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof BackendMisconfiguredError) {
      this.#logger.error({ backend: slot.backend.label, code: error.code }, message);
      slot.breaker.trip(error);
    } else {
      const previous = slot.breaker.recordFailure(error);
      // One line per outage: a failed probe (half-open back to open) is the same outage going on.
      const changed = previous !== slot.breaker.state && previous !== 'half-open';
      this.#logger[changed ? 'warn' : 'debug']({ backend: slot.backend.label, state: slot.breaker.state, err: message }, `backend ${slot.breaker.state}`);
    }
    if (slot.breaker.state === 'open') this.#scheduleProbe(slot);
  }

  /**
   * When a request finds every usable backend open, probes them now instead of waiting out their
   * backoff (at most once per DEMAND_PROBE_INTERVAL_MS each): recovery follows demand at once.
   */
  async probeIfNoneClosed(slots: readonly Slot[], sequence: string): Promise<void> {
    const usable = slots.filter((s) => !s.exhausted.has(sequence) && !s.quarantined.has(sequence));
    if (usable.some((s) => s.breaker.closed)) return;
    const now = this.#clock();
    const due = usable.filter((s) => now - s.lastDemandProbeAt >= DEMAND_PROBE_INTERVAL_MS);
    await Promise.all(
      due.map((slot) => {
        slot.lastDemandProbeAt = now;
        return this.#runProbe(slot, true);
      }),
    );
  }

  /** Stops scheduling probes and cancels those scheduled. */
  close(slots: readonly Slot[]): void {
    this.#closed = true;
    for (const s of slots) clearTimeout(s.probeTimer);
  }

  async #runProbe(slot: Slot, force: boolean): Promise<void> {
    if (this.#closed) return;
    if (!slot.breaker.beginProbe(force)) {
      // Not due: its backoff grew after the timer was set (a failure elsewhere reopened it), or the
      // timer fired a little early. Dropping the chain here would leave the backend open for good.
      if (!force && slot.breaker.state === 'open') this.#scheduleProbe(slot);
      return;
    }
    try {
      await slot.backend.settings();
      this.recordSuccess(slot);
    } catch (error) {
      this.recordFailure(slot, error);
    }
  }

  #scheduleProbe(slot: Slot): void {
    if (this.#closed || slot.probeTimer !== undefined) return;
    slot.probeTimer = setTimeout(() => {
      slot.probeTimer = undefined;
      void this.#runProbe(slot, false);
    }, slot.breaker.probeInMs + 1);
    slot.probeTimer.unref();
  }
}
