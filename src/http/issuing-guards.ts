/**
 * The checks every issuing request passes, in order: the sequence's client tokens, then the rate
 * limit. One instance per app: the Express routes and the fast path share its buckets.
 */
import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import type { Caller } from '../core/caller.js';
import type { TicketdError } from '../core/errors.js';
import { clientTokenRefusal, requireClientToken } from './client-auth.js';
import type { Credentials } from './credentials.js';
import { createRateLimiter, rateLimitGuard } from './rate-limit.js';
import { callerOnce, type CountCaller } from './request-caller.js';

/** The issuing routes' guards, for Express and for the fast path. */
export interface IssuingGuards {
  /** Who sent the request, counted (request-caller.ts); for the fast path, which answers the request alone. */
  identify(req: IncomingMessage): Caller;
  /** Why this caller may not issue from `name`, or undefined; an admitted request takes from its rate-limit bucket (a peer's: none). */
  refusal(name: string, caller: Caller, req: IncomingMessage): TicketdError | undefined;
  /** The same checks as Express middleware (routes with `:name`). */
  readonly middleware: readonly RequestHandler[];
}

/** The guards for these credentials, with a rate limit when `perSecond` is given; `count` counts each request's caller. */
export function issuingGuards(
  credentials: Credentials,
  perSecond: number | undefined,
  count?: CountCaller,
): IssuingGuards {
  // The client-token check always stands: a reload may give a sequence tokens it had none of.
  const limiter = perSecond === undefined ? undefined : createRateLimiter(perSecond);
  return {
    identify: (req) => callerOnce(req, credentials, count),
    refusal: (name, caller, req) =>
      clientTokenRefusal(credentials, name, caller) ??
      (caller.peer || limiter === undefined ? undefined : limiter.admit(caller, req.socket.remoteAddress)),
    middleware: [requireClientToken(credentials), ...(limiter === undefined ? [] : [rateLimitGuard(limiter)])],
  };
}
