/** Optional per-sequence client tokens for the issuing routes, compared in constant time. */
import type { Request, RequestHandler } from 'express';
import { ForbiddenError, UnauthorizedError } from '../core/errors.js';
import { isOneOf, type Credentials } from './credentials.js';

/**
 * Why a request for sequence `name` with this Authorization header may not issue, or undefined when
 * it may: the sequence (or `*`) has no tokens, or the header is `Bearer <token>` with one of them.
 * Tokens never travel in the URL. The Express guard and the fast path both ask this.
 */
export function clientTokenRefusal(
  credentials: Credentials,
  name: string,
  authorization: string | undefined,
): UnauthorizedError | ForbiddenError | undefined {
  const allowed = credentials.clientTokensOf(name);
  if (allowed.length === 0) return undefined;
  const token = bearerOf(authorization);
  if (token === undefined)
    return new UnauthorizedError(`sequence ${name} needs a client token: send Authorization: Bearer <token>`);
  if (!isOneOf(token, allowed))
    return new ForbiddenError(`this token is not one of the client tokens of sequence ${name}`);
  return undefined;
}

/** The client-token check as an Express guard for routes with `:name`. */
export function requireClientToken(credentials: Credentials): RequestHandler {
  return (req, _res, next) => {
    next(clientTokenRefusal(credentials, String(req.params.name), req.headers.authorization));
  };
}

/**
 * Throws unless the request carries one of the tokens configured for sequence `name` itself (not
 * `*`): what an opaque sequence asks before it hands out ordered blocks or its key (docs/opaque-ids.md, "In use").
 */
export function ownTokenCheck(credentials: Credentials): (req: Request, name: string, what: string) => void {
  return (req, name, what) => {
    const own = credentials.ownTokensOf(name);
    if (own.length === 0) {
      throw new ForbiddenError(
        `opaque sequence ${name} gives ${what} only to holders of its own client token, and it has none: add ${name}:<token> to TICKETD_CLIENT_TOKENS`,
      );
    }
    const token = bearerToken(req);
    if (token === undefined)
      throw new UnauthorizedError(
        `opaque sequence ${name} gives ${what} only to holders of its own client token: send Authorization: Bearer <token>`,
      );
    if (!isOneOf(token, own))
      throw new ForbiddenError(
        `opaque sequence ${name} gives ${what} only to holders of its own client token; this one is not among them`,
      );
  };
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(req: Request): string | undefined {
  return bearerOf(req.headers.authorization);
}

/** The token of an Authorization header's value `Bearer <token>`, or undefined. */
export function bearerOf(authorization: string | undefined): string | undefined {
  return authorization === undefined ? undefined : /^Bearer (\S+)$/.exec(authorization)?.[1];
}
