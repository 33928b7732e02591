/** Bearer-token check for admin routes, in constant time. */
import type { Request, RequestHandler } from 'express';
import { ForbiddenError, UnauthorizedError } from '../core/errors.js';
import { bearerToken } from './client-auth.js';
import type { Credentials } from './credentials.js';

/** Middleware that admits only `Authorization: Bearer <token>` with an admin token; none set disables admin. */
export function requireAdmin(credentials: Credentials): RequestHandler {
  return (req, _res, next) => {
    if (!credentials.adminEnabled) {
      next(new ForbiddenError('admin API is disabled: set TICKETD_ADMIN_TOKEN to enable it'));
      return;
    }
    const given = bearerToken(req);
    if (given === undefined) {
      next(new UnauthorizedError('admin route: send Authorization: Bearer <TICKETD_ADMIN_TOKEN>'));
      return;
    }
    if (!credentials.isAdmin(given)) {
      next(new ForbiddenError('admin token does not match'));
      return;
    }
    next();
  };
}

/** Whether a request bears an admin token, for routes open to all that show the admin more (visibility.ts). */
export function adminCheck(credentials: Credentials): (req: Request) => boolean {
  return (req) => {
    const given = bearerToken(req);
    return given !== undefined && credentials.isAdmin(given);
  };
}
