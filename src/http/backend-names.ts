/**
 * What a client without the admin token sees of the backends (design.md, "Listeners"): each by its
 * name (the URL's `name=`, else its letter in TICKETD_BACKENDS: A, B, …), never its host, port,
 * database, account, server identity or TLS details, and no error text (a driver's message names
 * hosts; MySQL's access-denied names the account). The admin token shows everything, on the same routes.
 */
import type { BackendSequenceStatus, BackendStatus } from '../allocator/allocator.js';
import { backendLetter } from '../backend/backend-address.js';
import type { TicketService } from '../service/ticket-service.js';
import type { Caller } from '../core/caller.js';
import type { Problem } from './problem.js';

/** Stands for an error's text where a client without the admin token would read it. */
export const ERROR_SHOWN_TO_ADMIN = 'failed (the error is shown with the admin token)';

/** Backends by name, and text with their addresses replaced by their names. */
export interface BackendNames {
  /** The backend's name; an unknown label is returned as "?" rather than shown. */
  nameOf(label: string): string;
  /** The text with every backend's URL (with or without an account) and host:port replaced by its name. */
  readonly scrub: (text: string) => string;
}

/**
 * Names for the backends of `labels` (`mysql://host:port/db`, in TICKETD_BACKENDS order): `names`
 * in the same order, else their letters.
 */
export function backendNames(labels: readonly string[], names?: readonly string[]): BackendNames {
  const nameAt = (i: number): string => names?.[i] ?? backendLetter(i);
  const byLabel = new Map(labels.map((label, i) => [label, nameAt(i)]));
  // Longest address first, so that host:3306 never eats a piece of host:33060.
  const patterns = labels
    .map((label, i) => ({ label, letter: nameAt(i), hostPort: /^mysql:\/\/([^/]+)/.exec(label)?.[1] ?? label }))
    .sort((a, b) => b.hostPort.length - a.hostPort.length)
    .map(({ label, letter, hostPort }) => {
      const database = label.slice(`mysql://${hostPort}`.length);
      const url = new RegExp(`mysql://(?:[^\\s@/]*@)?${escape(hostPort)}(?:${escape(database)})?`, 'g');
      return { url, hostPort: new RegExp(`(?<![\\w.-])${escape(hostPort)}(?![\\d])`, 'g'), letter };
    });
  return {
    nameOf: (label) => byLabel.get(label) ?? '?',
    scrub: (text) =>
      patterns
        .reduce((t, p) => t.replace(p.url, `backend ${p.letter}`).replace(p.hostPort, `backend ${p.letter}`), text)
        .replace(/backend backend /g, 'backend '),
  };
}

/** A backend's state for /readyz, as a client without the admin token sees it: its name, no identity or TLS details. */
export function strangerBackend(status: BackendStatus): BackendStatus {
  return {
    ...status,
    backend: status.name,
    identity: undefined,
    transport: undefined,
    lastError: status.lastError === undefined ? undefined : ERROR_SHOWN_TO_ADMIN,
  };
}

/** A backend's state for one sequence, as a client without the admin token sees it. */
export function strangerSequenceBackend(status: BackendSequenceStatus, names: BackendNames): BackendSequenceStatus {
  return {
    ...status,
    backend: status.name,
    lastError: status.lastError === null ? null : ERROR_SHOWN_TO_ADMIN,
    quarantined: status.quarantined === null ? null : names.scrub(status.quarantined),
  };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The names of the service's backends. */
export function namesOf(service: TicketService): BackendNames {
  const backends = service.backendStatus();
  return backendNames(
    backends.map((b) => b.backend),
    backends.map((b) => b.name),
  );
}

/** Codes whose detail carries a backend's error text: a client without the admin token gets states by letter instead. */
const ERROR_CODES: Readonly<Record<string, string>> = Object.freeze({
  TICKETD_BACKENDS_UNAVAILABLE: 'no backend could do this now',
  TICKETD_BACKEND_MISCONFIGURED: "a backend's settings are refused",
  TICKETD_TICKET_CLAIMED_BEFORE: 'a backend handed out tickets used before; none of their IDs were served',
  TICKETD_BACKEND_ACCESS_DENIED: "a backend refused ticketd's account",
  TICKETD_BACKEND_TLS: "a backend's TLS connection failed",
});

/** The problem as a client without the admin token reads it: backends by letter, no error text. */
export function strangerProblem(problem: Problem, service: TicketService): Problem {
  const names = namesOf(service);
  const summary = ERROR_CODES[problem.code];
  if (summary === undefined) return { ...problem, detail: names.scrub(problem.detail) };
  const states = service.backendStatus().map((b) => `${b.name} ${b.state === 'half-open' ? 'probed' : b.state}`);
  return {
    ...problem,
    detail: `${summary} (backends: ${states.join(', ')}); each backend's error is shown with the admin token (GET /readyz)`,
  };
}

/**
 * What a caller may read of a problem: everything with an admin token, otherwise strangerProblem's
 * view. One rule for Express's error handler and the fast path.
 */
export function problemView(service: TicketService): (caller: Caller) => ((problem: Problem) => Problem) | undefined {
  return (caller) => (caller.admin ? undefined : (problem) => strangerProblem(problem, service));
}
