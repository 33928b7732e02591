/** Bearer-token check for admin routes, in constant time. */
import { timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import { bearerToken, digest } from './client-auth.js';

/** Middleware that admits only `Authorization: Bearer <token>`; undefined token disables admin. */
export function requireAdmin(token: string | undefined): RequestHandler {
  // Hashing both sides gives equal-length buffers, so the comparison leaks neither length nor content.
  const expected = token === undefined ? undefined : digest(token);
  return (req, _res, next) => {
    if (expected === undefined) {
      next(new ForbiddenError('admin API is disabled: set TICKETD_ADMIN_TOKEN to enable it'));
      return;
    }
    const given = bearerToken(req);
    if (given === undefined) {
      next(new UnauthorizedError('admin route: send Authorization: Bearer <TICKETD_ADMIN_TOKEN>'));
      return;
    }
    if (!timingSafeEqual(digest(given), expected)) {
      next(new ForbiddenError('admin token does not match'));
      return;
    }
    next();
  };
}

/** Whether a request bears the admin token, for routes open to all that show the admin more (visibility.ts). */
export function adminCheck(token: string | undefined): (req: Request) => boolean {
  const expected = token === undefined ? undefined : digest(token);
  return (req) => {
    const given = bearerToken(req);
    return expected !== undefined && given !== undefined && timingSafeEqual(digest(given), expected);
  };
}
