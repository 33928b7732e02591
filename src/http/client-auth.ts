/** Optional per-sequence client tokens for the issuing routes, judged on the request's caller (request-caller.ts). */
import type { RequestHandler } from 'express';
import { ANONYMOUS, type Caller } from '../core/caller.js';
import { ForbiddenError, UnauthorizedError } from '../core/errors.js';
import { isClientOf, type Credentials } from './credentials.js';
import { callerOf } from './request-caller.js';

/**
 * Why this caller may not issue from sequence `name`, or undefined when it may: the sequence (or
 * `*`) has no tokens, the caller holds one of them, or it is a peer (which judged its own caller's
 * token before forwarding). Tokens never travel in the URL. The Express guard and the fast path both ask this.
 */
export function clientTokenRefusal(
  credentials: Credentials,
  name: string,
  caller: Caller,
): UnauthorizedError | ForbiddenError | undefined {
  if (caller.peer || !credentials.guarded(name) || isClientOf(caller, name)) return undefined;
  if (caller.name === ANONYMOUS)
    return new UnauthorizedError(`sequence ${name} needs a client token: send Authorization: Bearer <token>`);
  return new ForbiddenError(`this token is not one of the client tokens of sequence ${name}`);
}

/** The client-token check as an Express guard for routes with `:name`. */
export function requireClientToken(credentials: Credentials): RequestHandler {
  return (req, _res, next) => {
    next(clientTokenRefusal(credentials, String(req.params.name), callerOf(req)));
  };
}

/**
 * Throws unless the caller holds one of the tokens configured for sequence `name` itself (not
 * `*`): what an opaque sequence asks before it hands out ordered blocks or its key (docs/opaque-ids.md, "In use").
 */
export function ownTokenCheck(credentials: Credentials): (caller: Caller, name: string, what: string) => void {
  return (caller, name, what) => {
    if (!credentials.hasOwnTokens(name)) {
      throw new ForbiddenError(
        `opaque sequence ${name} gives ${what} only to holders of its own client token, and it has none: add ${name}:<token> to TICKETD_CLIENT_TOKENS`,
      );
    }
    if (caller.name === ANONYMOUS)
      throw new UnauthorizedError(
        `opaque sequence ${name} gives ${what} only to holders of its own client token: send Authorization: Bearer <token>`,
      );
    if (!caller.clientOf.has(name))
      throw new ForbiddenError(
        `opaque sequence ${name} gives ${what} only to holders of its own client token; this one is not among them`,
      );
  };
}
