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

/** No ticketd URL leased a block. */
export class LeaseFailedError extends TicketClientError {
  readonly code = 'TICKETD_CLIENT_LEASE_FAILED';
}

/** A key or an ID that an opaque sequence's permutation cannot take (wrong length, outside the domain). */
export class OpaqueIdError extends TicketClientError {
  readonly code = 'TICKETD_CLIENT_OPAQUE_ID';
}
