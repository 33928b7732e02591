/**
 * Who is calling: read once from a request's credentials at the HTTP edge (http/request-caller.ts)
 * and passed down in place of the raw Authorization header. It names the token, never holds it.
 */

/** Token names: what logs and metrics show for a token, in TICKETD_ADMIN_TOKEN and TICKETD_CLIENT_TOKENS. */
export const TOKEN_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;

/** The name of a caller without a bearer token. */
export const ANONYMOUS = 'anonymous';
/** The name of a caller whose bearer token is none of the configured ones. */
export const UNKNOWN_TOKEN = 'unknown';
/** The name of another front end of the fleet that showed the peer proof (a strict sequence's forwarded call). */
export const PEER = 'peer';

/** A caller and what its credentials allow. */
export interface Caller {
  /** The token's name; ANONYMOUS, UNKNOWN_TOKEN or PEER for the callers that have none. */
  readonly name: string;
  /** True when the bearer token is an admin token. */
  readonly admin: boolean;
  /** True for another front end of the fleet (the peer proof checked): it judged its own caller's token. */
  readonly peer: boolean;
  /** Sequences (and worker pools) the token is one of the client tokens of; `*` for the ones that take any sequence. */
  readonly clientOf: ReadonlySet<string>;
  /** For a peer, the name of the caller it forwards for; undefined otherwise. */
  readonly onBehalfOf?: string | undefined;
  /** What a rate limit counts this caller's requests by: its token's digest (undefined: by its address). */
  readonly bucket?: string | undefined;
}

const NO_SEQUENCES: ReadonlySet<string> = Object.freeze(new Set<string>());

/** A caller without a bearer token. */
export const ANONYMOUS_CALLER: Caller = Object.freeze({
  name: ANONYMOUS,
  admin: false,
  peer: false,
  clientOf: NO_SEQUENCES,
});

/** A caller whose bearer token matches none of the configured ones; `bucket` is the token's digest. */
export function unknownCaller(bucket: string): Caller {
  return Object.freeze({ name: UNKNOWN_TOKEN, admin: false, peer: false, clientOf: NO_SEQUENCES, bucket });
}

/** Another front end of the fleet, forwarding for the caller named `onBehalfOf`. */
export function peerCaller(onBehalfOf: string | undefined): Caller {
  return Object.freeze({ name: PEER, admin: false, peer: true, clientOf: NO_SEQUENCES, onBehalfOf });
}
