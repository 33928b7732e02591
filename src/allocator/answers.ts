/** Backends' answers as errors to throw: the one place a backend's raw failure becomes ticketd's. */
import { BackendsUnavailableError, TicketdError } from '../core/errors.js';
import { errorText } from '../util/error-text.js';
import type { Answer } from './key-agreement.js';

/**
 * A failed answer as the error to throw: ticketd's own refusals (a conflict, a missing grant, an
 * outdated schema) as they are; anything else (refused connections, a timeout, a server killed
 * under the call) is the backend not answering, named, with its cause. Raw driver errors thrown
 * past here reached the HTTP layer as 500s.
 */
export function failureOf(answer: Answer<unknown> & { readonly ok: false }): TicketdError {
  if (answer.error instanceof TicketdError) return answer.error;
  return new BackendsUnavailableError(`backend ${answer.backend} did not answer: ${errorText(answer.error)}`, {
    cause: answer.error,
  });
}

/** Throws the first failed answer's error (failureOf), if any. */
export function throwFirstFailure(answers: readonly Answer<unknown>[]): void {
  for (const a of answers) if (!a.ok) throw failureOf(a);
}
