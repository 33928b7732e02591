/** Optional per-sequence client tokens for the issuing routes, compared in constant time. */
import type { Request, RequestHandler } from 'express';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import { isOneOf, type Credentials } from './credentials.js';

/**
 * Admits a request for sequence `:name` when that sequence (or `*`) has no tokens, or when it
 * carries `Authorization: Bearer <token>` with one of them. Tokens never travel in the URL.
 */
export function requireClientToken(credentials: Credentials): RequestHandler {
  return (req, _res, next) => {
    const name = String(req.params.name);
    const allowed = credentials.clientTokensOf(name);
    if (allowed.length === 0) {
      next();
      return;
    }
    const token = bearerToken(req);
    if (token === undefined) {
      next(new UnauthorizedError(`sequence ${name} needs a client token: send Authorization: Bearer <token>`));
      return;
    }
    if (!isOneOf(token, allowed)) {
      next(new ForbiddenError(`this token is not one of the client tokens of sequence ${name}`));
      return;
    }
    next();
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
      throw new ForbiddenError(`opaque sequence ${name} gives ${what} only to holders of its own client token, and it has none: add ${name}:<token> to TICKETD_CLIENT_TOKENS`);
    }
    const token = bearerToken(req);
    if (token === undefined) throw new UnauthorizedError(`opaque sequence ${name} gives ${what} only to holders of its own client token: send Authorization: Bearer <token>`);
    if (!isOneOf(token, own)) throw new ForbiddenError(`opaque sequence ${name} gives ${what} only to holders of its own client token; this one is not among them`);
  };
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(req: Request): string | undefined {
  return /^Bearer (\S+)$/.exec(req.get('authorization') ?? '')?.[1];
}
