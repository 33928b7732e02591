/** Optional per-sequence client tokens for the issuing routes, compared in constant time. */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { ANY_SEQUENCE } from '../config.js';
import { ForbiddenError, UnauthorizedError } from '../errors.js';

/**
 * Admits a request for sequence `:name` when that sequence (or `*`) has no tokens, or when it
 * carries `Authorization: Bearer <token>` with one of them. Tokens never travel in the URL.
 */
export function requireClientToken(tokens: ReadonlyMap<string, readonly string[]>): RequestHandler {
  const digests = new Map([...tokens].map(([sequence, list]) => [sequence, list.map(digest)]));
  const any = digests.get(ANY_SEQUENCE) ?? [];
  return (req, _res, next) => {
    const name = String(req.params.name);
    const allowed = [...(digests.get(name) ?? []), ...any];
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
export function ownTokenCheck(tokens: ReadonlyMap<string, readonly string[]>): (req: Request, name: string, what: string) => void {
  const digests = new Map([...tokens].filter(([sequence]) => sequence !== ANY_SEQUENCE).map(([sequence, list]) => [sequence, list.map(digest)]));
  return (req, name, what) => {
    const own = digests.get(name) ?? [];
    if (own.length === 0) {
      throw new ForbiddenError(`opaque sequence ${name} gives ${what} only to holders of its own client token, and it has none: add ${name}:<token> to TICKETD_CLIENT_TOKENS`);
    }
    const token = bearerToken(req);
    if (token === undefined) throw new UnauthorizedError(`opaque sequence ${name} gives ${what} only to holders of its own client token: send Authorization: Bearer <token>`);
    if (!isOneOf(token, own)) throw new ForbiddenError(`opaque sequence ${name} gives ${what} only to holders of its own client token; this one is not among them`);
  };
}

/** True when the token's digest is one of `allowed`. */
function isOneOf(token: string, allowed: readonly Buffer[]): boolean {
  const given = digest(token);
  // Every allowed token is compared, so the time taken does not tell which one came close.
  let ok = false;
  for (const expected of allowed) ok = timingSafeEqual(given, expected) || ok;
  return ok;
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(req: Request): string | undefined {
  return /^Bearer (\S+)$/.exec(req.get('authorization') ?? '')?.[1];
}

/** Hashing gives equal-length buffers, so the comparison leaks neither length nor content. */
export function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
