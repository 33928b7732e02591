/**
 * Backend health: every call's outcome goes to the backend's circuit breaker, state changes are
 * logged once with their reason, and an open breaker is probed in the background until it closes.
 */
import { BackendAccessDeniedError, refusesBackend, type TicketdError } from '../core/errors.js';
import type { Logger } from '../logger.js';
import type { BackendSlot } from './backend-slot.js';
import type { Clock } from '../core/clock.js';
import { errorText } from '../util/error-text.js';

/** Least time between two probes of one backend forced by requests while every backend is open. */
export const DEMAND_PROBE_INTERVAL_MS = 100;

/**
 * A backend whose shown state comes from its last call (a closed breaker whose last call failed,
 * 'down'; or a refusal) is asked again after this long, whether or not a request needs it: what
 * operators read (/readyz, the status page) then tells its state now, not that of a call that
 * under a warm cache may be minutes old.
 */
export const STATE_RECHECK_MS = 2000;

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
  recordSuccess(slot: BackendSlot): void {
    const previous = slot.recordSuccess();
    // A refusal is asked again on its own: the call that succeeded may not be the one refused.
    if (slot.refused) this.#scheduleRecheck(slot);
    if (previous === 'up') return;
    // Rejoining after an outage: recordFailure has already made its lanes stale.
    // The first answer after start is no change of state worth a line at info.
    const level = previous === 'unknown' ? 'debug' : 'info';
    this.#logger[level]({ backend: slot.label, was: previous }, 'backend up');
  }

  /**
   * A call to the backend failed; a misconfiguration trips the breaker at once. Whatever failed (a
   * broken connection, a timeout), the slot makes its lanes stale, so they are checked again
   * (claims read, counter compared) before its next tickets are used.
   */
  recordFailure(slot: BackendSlot, error: unknown): void {
    if (error instanceof BackendAccessDeniedError) {
      // The backend answered: a missing GRANT is the operator's to fix, not an outage to fail over from.
      if (slot.recordRefusal(errorText(error))) {
        this.#logger.error(
          { backend: slot.label, code: error.code, err: errorText(error) },
          'backend refused: missing privilege (docs/operating.md, "Accounts and GRANTs"; npx ticketd check names each)',
        );
      }
      this.#scheduleRecheck(slot);
      return;
    }
    const previous = slot.recordFailure(error);
    const message = errorText(error);
    if (refusesBackend(error)) {
      this.#logger.error({ backend: slot.label, code: (error as TicketdError).code }, message);
    } else {
      // One line per outage: a failed probe (half-open back to open) is the same outage going on.
      const changed = previous !== slot.state && previous !== 'half-open';
      this.#logger[changed ? 'warn' : 'debug'](
        { backend: slot.label, state: slot.state, err: message },
        `backend ${slot.state}`,
      );
    }
    if (slot.state === 'open') this.#scheduleProbe(slot);
    else if (slot.state === 'down') this.#scheduleRecheck(slot);
  }

  #scheduleRecheck(slot: BackendSlot): void {
    if (!this.#closed) slot.scheduleProbe(() => void this.#recheck(slot), STATE_RECHECK_MS);
  }

  /**
   * Asks a backend again what its last call left shown: one left 'down' whether it answers now (up,
   * or one failure more: open), one refused whether its account still lacks what serving needs.
   */
  async #recheck(slot: BackendSlot): Promise<void> {
    if (this.#closed) return;
    if (slot.state === 'open') {
      this.#scheduleProbe(slot);
      return;
    }
    try {
      if (slot.state === 'down') {
        await slot.backend.settings();
        this.recordSuccess(slot);
      }
      if (!slot.refused) return;
      const denials = await slot.backend.servingDenials();
      slot.noteRefusalRecheck(denials.length > 0);
      if (denials.length > 0) this.#scheduleRecheck(slot);
      else this.#logger.info({ backend: slot.label }, 'backend no longer refused: its account has what serving needs');
    } catch (error) {
      this.recordFailure(slot, error);
    }
  }

  /**
   * When a request finds every usable backend open, probes them now instead of waiting out their
   * backoff (at most once per DEMAND_PROBE_INTERVAL_MS each): recovery follows demand at once.
   */
  async probeIfNoneClosed(slots: readonly BackendSlot[], usable: (slot: BackendSlot) => boolean): Promise<void> {
    const candidates = slots.filter(usable);
    if (candidates.some((s) => s.closed)) return;
    const now = this.#clock();
    const due = candidates.filter((s) => s.takeDemandProbe(now, DEMAND_PROBE_INTERVAL_MS));
    await Promise.all(due.map((slot) => this.#runProbe(slot, true)));
  }

  /** Stops scheduling probes and cancels those scheduled. */
  close(slots: readonly BackendSlot[]): void {
    this.#closed = true;
    for (const s of slots) s.cancelProbe();
  }

  async #runProbe(slot: BackendSlot, force: boolean): Promise<void> {
    if (this.#closed) return;
    if (!slot.beginProbe(force)) {
      // Not due: its backoff grew after the timer was set (a failure elsewhere reopened it), or the
      // timer fired a little early. Dropping the chain here would leave the backend open for good.
      if (!force && slot.state === 'open') this.#scheduleProbe(slot);
      return;
    }
    try {
      await slot.backend.settings();
      this.recordSuccess(slot);
    } catch (error) {
      this.recordFailure(slot, error);
    }
  }

  #scheduleProbe(slot: BackendSlot): void {
    if (this.#closed) return;
    slot.scheduleProbe(() => void this.#runProbe(slot, false));
  }
}
