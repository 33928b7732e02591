/** The admin routes' check, on the request's caller (request-caller.ts), and the audit line of each admitted action. */
import type { Request, RequestHandler } from 'express';
import { ANONYMOUS } from '../core/caller.js';
import { ForbiddenError, UnauthorizedError } from '../core/errors.js';
import type { Audit } from './audit.js';
import type { Credentials } from './credentials.js';
import { callerOf } from './request-caller.js';

/** A guard for one admin action (`create-sequence`, `retire-sequence`, …), named in the audit log. */
export type AdminGuard = (action: string) => RequestHandler;

/**
 * Guards that admit only a bearer of an admin token (none set disables admin), each logging its
 * admitted action with its outcome; a refusal is logged where it is answered (app.ts).
 */
export function requireAdmin(credentials: Credentials, audit: Audit): AdminGuard {
  return (action) => (req, res, next) => {
    if (!credentials.adminEnabled) {
      next(new ForbiddenError('admin API is disabled: set TICKETD_ADMIN_TOKEN to enable it'));
      return;
    }
    const caller = callerOf(req);
    if (caller.name === ANONYMOUS) {
      next(new UnauthorizedError('admin route: send Authorization: Bearer <TICKETD_ADMIN_TOKEN>'));
      return;
    }
    if (!caller.admin) {
      next(new ForbiddenError('admin token does not match'));
      return;
    }
    audit.admitted(caller, action, String(req.params.name ?? ''), res);
    next();
  };
}

/** Whether a request bears an admin token, for routes open to all that show the admin more (visibility.ts). */
export function adminCheck(): (req: Request) => boolean {
  return (req) => callerOf(req).admin;
}
