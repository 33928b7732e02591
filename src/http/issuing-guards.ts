/**
 * The checks every issuing request passes, in order: the sequence's client tokens, then the rate
 * limit. One instance per app: the Express routes and the fast path share its buckets.
 */
import type { RequestHandler } from 'express';
import type { TicketdError } from '../core/errors.js';
import { clientTokenRefusal, requireClientToken } from './client-auth.js';
import type { Credentials } from './credentials.js';
import { createRateLimiter, rateLimitGuard } from './rate-limit.js';

/** The issuing routes' guards, for Express and for the fast path. */
export interface IssuingGuards {
  /** Why this request may not issue from `name`, or undefined; an admitted request takes from its rate-limit bucket. */
  refusal(name: string, authorization: string | undefined, address: string | undefined): TicketdError | undefined;
  /** The same checks as Express middleware (routes with `:name`). */
  readonly middleware: readonly RequestHandler[];
}

/** The guards for these credentials, with a rate limit when `perSecond` is given. */
export function issuingGuards(credentials: Credentials, perSecond: number | undefined): IssuingGuards {
  // The client-token check always stands: a reload may give a sequence tokens it had none of.
  const limiter = perSecond === undefined ? undefined : createRateLimiter(perSecond);
  return {
    refusal: (name, authorization, address) =>
      clientTokenRefusal(credentials, name, authorization) ?? limiter?.admit(authorization, address),
    middleware: [requireClientToken(credentials), ...(limiter === undefined ? [] : [rateLimitGuard(limiter)])],
  };
}
