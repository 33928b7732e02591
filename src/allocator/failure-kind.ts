/**
 * What a backend's failure says about its server, told apart here (the allocator owns the backends
 * and their driver) so that the service words its advice without reading driver errors.
 */
import { isLoginDenied, isUnknownDatabase, serverAnswered } from '../backend/mysql/errors.js';

/**
 * `unknown-database`: the server has no database of the URL's name; `login-denied`: it refused the
 * login; `answered`: it answered with another error (running, so "start it" would mislead);
 * `no-answer`: nothing came back from a server (refused connection, timeout).
 */
export type FailureKind = 'unknown-database' | 'login-denied' | 'answered' | 'no-answer';

/** How deep along the `cause` chain a server's own error is looked for. */
const CAUSE_DEPTH = 5;

/** The kind of a backend's failure, from the server's own error found along the cause chain. */
export function failureKind(error: unknown): FailureKind {
  const root = serverError(error);
  if (root === undefined) return 'no-answer';
  if (isUnknownDatabase(root)) return 'unknown-database';
  if (isLoginDenied(root)) return 'login-denied';
  return 'answered';
}

/** The error the server sent, found along the cause chain, if the server answered at all. */
function serverError(error: unknown): unknown {
  for (
    let e = error, depth = 0;
    e !== undefined && e !== null && depth < CAUSE_DEPTH;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    if (serverAnswered(e)) return e;
  }
  return undefined;
}
