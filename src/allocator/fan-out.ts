/**
 * One operation on many backends at once, each call through its breaker: the outcomes feed the
 * breakers, and each backend's answer comes back on its own.
 */
import type { TicketBackend } from '../backend/ticket-backend.js';
import { BackendAccessDeniedError, BackendsUnavailableError, refusesBackend, TicketdError } from '../core/errors.js';
import type { BackendHealth } from './backend-health.js';
import type { BackendSlot } from './backend-slot.js';
import type { Answer } from './key-agreement.js';

/** Which backends a fan-out reaches, and how a refusal counts. */
export interface FanOutOptions {
  /** Also call backends whose breaker is open. */
  readonly includeOpen?: boolean;
  /** Only the backends with these labels. */
  readonly only?: readonly string[];
  /** A serving-path call: a missing grant counts against the backend. */
  readonly serving?: boolean;
}

/**
 * Runs an operation on every backend whose breaker is closed, at once, feeding the outcomes to
 * the breakers. An open backend is answered for without a call. A refusal in ticketd's own terms
 * (a conflicting sequence, a missing grant) is an answer, not a failure of the backend.
 */
export function everywhere<T>(
  all: readonly BackendSlot[],
  health: BackendHealth,
  operation: (backend: TicketBackend) => Promise<T>,
  options: FanOutOptions = {},
): Promise<Answer<T>[]> {
  const only = options.only;
  const slots = only === undefined ? all : all.filter((s) => only.includes(s.label));
  return Promise.all(
    slots.map(async (slot): Promise<Answer<T>> => {
      const backend = slot.label;
      if (!slot.closed && options.includeOpen !== true) {
        return {
          backend,
          ok: false,
          error: new BackendsUnavailableError(`backend ${backend} is ${slot.state}: ${slot.lastError ?? 'no answer'}`),
        };
      }
      try {
        const value = await operation(slot.backend);
        health.recordSuccess(slot);
        return { backend, ok: true, value };
      } catch (error) {
        // On the serving path (strict leases, worker leases) a missing grant is the backend's state
        // refused, logged and alerted; an admin call refused is the caller's answer alone.
        const refused = options.serving === true && error instanceof BackendAccessDeniedError;
        if (!(error instanceof TicketdError) || refusesBackend(error) || refused) health.recordFailure(slot, error);
        return { backend, ok: false, error };
      }
    }),
  );
}
