/** The client's errors: a literal `code` each, as the server's (docs/reference.md, "Errors"). */

/** Base of the client's errors. */
export abstract class TicketClientError extends Error {
  abstract readonly code: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** No ID is buffered for nextSync(); call next() (which waits for a lease) instead. */
export class NoBufferedIdsError extends TicketClientError {
  readonly code = 'TICKETD_CLIENT_EMPTY';
}

/** nextSync() on a strict sequence: each of its IDs comes from ticketd, so none is ever buffered; call next(). */
export class StrictSequenceError extends TicketClientError {
  readonly code = 'TICKETD_CLIENT_STRICT';
}

/** No ticketd URL leased a block (or a worker ID). */
export class LeaseFailedError extends TicketClientError {
  readonly code = 'TICKETD_CLIENT_LEASE_FAILED';
  /** The problem codes the servers answered with (`TICKETD_POOL_EXHAUSTED`, `TICKETD_LEASE_LOST`, …). */
  readonly codes: readonly string[];
  /** True when the last URL asked failed to answer or answered a 5xx (a full pool, a restart): a later try may succeed. */
  readonly retryable: boolean;

  constructor(message: string, options?: { cause?: unknown; codes?: readonly string[]; retryable?: boolean }) {
    super(message, options);
    this.codes = options?.codes ?? [];
    this.retryable = options?.retryable ?? false;
  }
}

/** A key or an ID that an opaque sequence's permutation cannot take (wrong length, outside the domain). */
export class OpaqueIdError extends TicketClientError {
  readonly code = 'TICKETD_CLIENT_OPAQUE_ID';
}

/** The Snowflake generator holds no lease now: not taken yet, lost, expired unrenewed, or closed. nextSync() throws this at once; next() and ready() after waiting leaseWaitMs for one. */
export class NoLeaseError extends TicketClientError {
  readonly code = 'TICKETD_CLIENT_NO_LEASE';
}

/** The clock went back further than maxStepBackMs below the last timestamp used: nothing is issued until it passes it again. */
export class ClockMovedBackError extends TicketClientError {
  readonly code = 'TICKETD_CLIENT_CLOCK_BACK';
}

/** This process's clock differs from the server's (judged on the monotonic clock since the last renewal) by more than the pool's maxSkewMs. */
export class ClockSkewError extends TicketClientError {
  readonly code = 'TICKETD_CLIENT_CLOCK_SKEW';
}

/** A Snowflake layout or epoch that cannot hold the pool's worker IDs or today's time. */
export class SnowflakeLayoutError extends TicketClientError {
  readonly code = 'TICKETD_CLIENT_SNOWFLAKE_LAYOUT';
}
