/**
 * Every failure ticketd reports has a literal `code`, and nothing else of HTTP: the HTTP layer
 * maps codes to statuses and problem types in one table (src/http/problem.ts); docs/reference.md lists
 * every code.
 */
export abstract class TicketdError extends Error {
  abstract readonly code: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad configuration: env, flags or a config value. The message names the setting. */
export class ConfigError extends TicketdError {
  readonly code = 'TICKETD_CONFIG_INVALID';
}

/** A request parameter or body that does not satisfy the contract. */
export class BadRequestError extends TicketdError {
  readonly code = 'TICKETD_BAD_REQUEST';
}

/** No (or a malformed) Authorization header on an admin route. */
export class UnauthorizedError extends TicketdError {
  readonly code = 'TICKETD_UNAUTHORIZED';
}

/** A token was given but it is wrong, or the admin API is disabled. */
export class ForbiddenError extends TicketdError {
  readonly code = 'TICKETD_FORBIDDEN';
}

/** No route matches the request. */
export class RouteNotFoundError extends TicketdError {
  readonly code = 'TICKETD_NOT_FOUND';
}

/** The path exists but not with this method. */
export class MethodNotAllowedError extends TicketdError {
  readonly code = 'TICKETD_METHOD_NOT_ALLOWED';
}

/** The named sequence exists on no reachable backend. */
export class SequenceNotFoundError extends TicketdError {
  readonly code = 'TICKETD_SEQUENCE_NOT_FOUND';
}

/** Decode: no block holding this ID has been handed out (outside the domain, or above its backend's last ticket). */
export class IdNotIssuedError extends TicketdError {
  readonly code = 'TICKETD_ID_NOT_ISSUED';
}

/** A sequence with this name exists with other settings (or backends disagree on them). */
export class SequenceConflictError extends TicketdError {
  readonly code = 'TICKETD_SEQUENCE_CONFLICT';
}

/** The sequence was retired for good: nothing of it is issued again, and its name is never reused. */
export class SequenceRetiredError extends TicketdError {
  readonly code = 'TICKETD_SEQUENCE_RETIRED';
}

/** The sequence has no IDs left at or below its maxId (until it is widened). */
export class SequenceExhaustedError extends TicketdError {
  readonly code = 'TICKETD_SEQUENCE_EXHAUSTED';
}

/** No backend answered and the cache cannot serve the request. Safe to retry later. */
export class BackendsUnavailableError extends TicketdError {
  readonly code = 'TICKETD_BACKENDS_UNAVAILABLE';
  /** Seconds a client should wait before retrying. */
  readonly retryAfterSeconds: number;

  constructor(message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options);
    this.retryAfterSeconds = options?.retryAfterSeconds ?? 1;
  }
}

/** A call forwarded to a front end that does not lead the strict sequence (any more): ask the backends who does. */
export class NotLeaderError extends TicketdError {
  readonly code = 'TICKETD_NOT_LEADER';
}

/** A strict sequence cannot hand out a block: a client serving IDs from its own block would serve them out of real-time order. */
export class StrictNoBlocksError extends TicketdError {
  readonly code = 'TICKETD_STRICT_NO_BLOCKS';
}

/** A token (or client address) sent more requests per second than TICKETD_RATE_LIMIT allows. */
export class RateLimitedError extends TicketdError {
  readonly code = 'TICKETD_RATE_LIMITED';
  /** Seconds until a request would be admitted again. */
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number) {
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** A backend's settings would let two backends issue the same ticket (offsets, increment). */
export class BackendMisconfiguredError extends TicketdError {
  readonly code = 'TICKETD_BACKEND_MISCONFIGURED';
}

/**
 * This ticketd is older than what a backend or a sequence needs (core/versions.ts): it refuses them
 * rather than guess, and the message names the version needed.
 */
export class UpgradeRequiredError extends TicketdError {
  readonly code = 'TICKETD_UPGRADE_REQUIRED';
  /** `backend`: the whole backend is refused (its breaker opens); `sequence`: only that sequence. */
  readonly scope: 'backend' | 'sequence';

  constructor(message: string, scope: 'backend' | 'sequence' = 'sequence', options?: { cause?: unknown }) {
    super(message, options);
    this.scope = scope;
  }
}

/** A backend's schema is older than this ticketd needs for what was asked; `ticketd init` upgrades it. */
export class SchemaOutdatedError extends TicketdError {
  readonly code = 'TICKETD_SCHEMA_OUTDATED';
}

/** True for the errors that refuse a backend outright (its breaker opens at once) rather than a failed call. */
export function refusesBackend(error: unknown): boolean {
  return (
    error instanceof BackendMisconfiguredError || (error instanceof UpgradeRequiredError && error.scope === 'backend')
  );
}

/**
 * A peer refused a ticket's claim: the ticket was claimed before (a counter went back and issued it
 * again), or it lies at or below the floor of pruned claims. Nothing from the ticket is served.
 */
export class TicketClaimedBeforeError extends TicketdError {
  readonly code = 'TICKETD_TICKET_CLAIMED_BEFORE';
  /** `duplicate`: the claim exists already; `below-floor`: at or below the pruned claims' floor. */
  readonly reason: 'duplicate' | 'below-floor';

  constructor(message: string, reason: 'duplicate' | 'below-floor', options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

/** A backend's counter reached the largest value its ticket table's column holds. */
export class CounterOverflowError extends TicketdError {
  readonly code = 'TICKETD_COUNTER_OVERFLOW';
}

/** A backend's TLS handshake was refused: an untrusted certificate, another name, TLS required or not offered. */
export class BackendTlsError extends TicketdError {
  readonly code = 'TICKETD_BACKEND_TLS';
}

/** The account in the backend URL lacks a privilege for what was asked (a missing GRANT). */
export class BackendAccessDeniedError extends TicketdError {
  readonly code = 'TICKETD_BACKEND_ACCESS_DENIED';
}

/** An admin request named a backend that is not configured. */
export class UnknownBackendError extends TicketdError {
  readonly code = 'TICKETD_UNKNOWN_BACKEND';
}

/** The local launcher found no MySQL-compatible server binary. */
export class NoServerBinaryError extends TicketdError {
  readonly code = 'TICKETD_NO_MYSQLD';
}

/** A local server did not start or stop as expected. */
export class LauncherError extends TicketdError {
  readonly code = 'TICKETD_LAUNCHER_FAILED';
}

/** `ticketd dev` found another live `ticketd dev` on the same data folder. */
export class DevAlreadyRunningError extends TicketdError {
  readonly code = 'TICKETD_DEV_RUNNING';
}

/** The HTTP port is taken by another process. */
export class PortInUseError extends TicketdError {
  readonly code = 'TICKETD_PORT_IN_USE';
}

// The client's errors live in ticketd-client (which depends on nothing); re-exported here.
export { LeaseFailedError, NoBufferedIdsError } from 'ticketd-client';

/** `ticketd fence` would move a sequence's counters past its maxId: it changes nothing and names the sequence. */
export class FenceRefusedError extends TicketdError {
  readonly code = 'TICKETD_FENCE_REFUSED';
}

/** `ticketd backends restore`: the dump did not load into the staging database, or another restore of the backend runs; the live database is unchanged. */
export class RestoreRefusedError extends TicketdError {
  readonly code = 'TICKETD_RESTORE_REFUSED';
}

/** `ticketd backends add|remove`: a step asked for before the steps it needs are done, or a fleet that does not answer. */
export class FleetChangeRefusedError extends TicketdError {
  readonly code = 'TICKETD_FLEET_CHANGE_REFUSED';
}

/** `ticketd migrate`: the legacy table or the backends do not allow the migration as asked. */
export class MigrationRefusedError extends TicketdError {
  readonly code = 'TICKETD_MIGRATION_REFUSED';
}

/** The named worker pool exists on no reachable backend. */
export class PoolNotFoundError extends TicketdError {
  readonly code = 'TICKETD_POOL_NOT_FOUND';
}

/** A worker pool with this name exists with other settings (or backends disagree on them). */
export class PoolConflictError extends TicketdError {
  readonly code = 'TICKETD_POOL_CONFLICT';
}

/**
 * Every worker ID of the pool is leased, or not yet past its reuse delay, or held by a claim, on
 * the backends that answered. Never a wrap-around: retry after `retryAfterSeconds`, or make a wider pool.
 */
export class PoolExhaustedError extends TicketdError {
  readonly code = 'TICKETD_POOL_EXHAUSTED';
  readonly retryAfterSeconds: number;

  constructor(message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options);
    this.retryAfterSeconds = options?.retryAfterSeconds ?? 1;
  }
}

/** A renewal or release named a lease that is no longer this holder's (expired, released, another epoch). Stop issuing on it. */
export class LeaseLostError extends TicketdError {
  readonly code = 'TICKETD_LEASE_LOST';
}

/** A block's lease given back is not one ticketd signed, or does not match the sequence: those IDs were never the caller's to give back. */
export class LeaseInvalidError extends TicketdError {
  readonly code = 'TICKETD_LEASE_INVALID';
}

/** That lease's IDs were given back already (docs/operating.md, "Giving IDs back"): they are not recorded twice. */
export class LeaseReturnedError extends TicketdError {
  readonly code = 'TICKETD_LEASE_RETURNED';
}
