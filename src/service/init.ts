/** `ticketd init`: schema, backend identity and the `default` sequence on every backend. */
import type { Allocator } from '../allocator/allocator.js';
import { DEFAULT_BLOCK_SIZE, DEFAULT_SEQUENCE_NAME, parseSequenceSettings } from '../core/sequence.js';
import { BackendTlsError, BackendsUnavailableError } from '../core/errors.js';
import type { TicketService } from './ticket-service.js';
import { errorText } from '../util/error-text.js';
import { failureKind } from '../allocator/failure-kind.js';

/** What init did on one backend. */
export interface InitResult {
  readonly backend: string;
  readonly identity: string;
  /** Sequences stored gated now, out of reach of ticketd 0.5 and older (core/versions.ts). */
  readonly gated: readonly string[];
}

/** Connects to every backend (checking its settings); throws naming the first that failed. */
export async function requireEveryBackend(allocator: Allocator, command: string): Promise<void> {
  const first = (await allocator.probe())[0];
  if (first !== undefined) {
    throw new BackendsUnavailableError(
      `${command} needs every backend: ${whatFailed(first.backend, first.error)}; then run ${command} again`,
      { cause: first.error },
    );
  }
}

/**
 * What to tell the operator about a backend that failed: a server that answered with an error is
 * running, so "start it" would send them the wrong way.
 */
export function whatFailed(backend: string, error: unknown): string {
  const reason = errorText(error);
  // A refused handshake names the backend and the setting already (TICKETD_BACKEND_TLS).
  if (error instanceof BackendTlsError) return `${backend} failed: ${reason}`;
  const kind = failureKind(error);
  if (kind === 'unknown-database') {
    const database = backend.replace(/^.*\//, '');
    return `${backend} is running but has no database ${database}: create it (CREATE DATABASE ${database}) and grant the account its privileges there (docs/operating.md, "Accounts and GRANTs")`;
  }
  if (kind === 'login-denied') {
    return (
      `${backend} is running but refused the login: ${reason}; check the user and password in TICKETD_BACKENDS. ` +
      "On MariaDB, an anonymous account (''@'localhost', made by the default install) matches a login from the same host before 'user'@'%' does " +
      "and refuses its password: drop it (DROP USER ''@'localhost'; DROP USER ''@'<hostname>') or create the account @'localhost' too"
    );
  }
  if (kind === 'answered') return `${backend} is running but answered: ${reason}`;
  return `${backend} failed: ${reason}; start it (or fix TICKETD_BACKENDS)`;
}

/** Applies the schema everywhere, then creates `default`. Idempotent; needs every backend up. */
export async function initBackends(allocator: Allocator, service: TicketService): Promise<InitResult[]> {
  await requireEveryBackend(allocator, 'init');
  const results = await allocator.applySchema();
  await service.createSequence(parseSequenceSettings(DEFAULT_SEQUENCE_NAME, { blockSize: String(DEFAULT_BLOCK_SIZE) }));
  return results;
}
