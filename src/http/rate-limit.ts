/** An optional per-token rate limit on the issuing routes: a token bucket per credential. */
import type { RequestHandler } from 'express';
import type { Clock } from '../core/clock.js';
import { RateLimitedError } from '../core/errors.js';
import type { Caller } from '../core/caller.js';
import { callerOf } from './request-caller.js';

/** Buckets kept before idle (full) ones are dropped. */
export const MAX_TRACKED_CREDENTIALS = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

/** One token bucket per credential; the Express guard and the fast path share one. */
export interface RateLimiter {
  /** Takes one request from the bucket of this caller's token (the client address without one); the refusal when it is empty. */
  admit(caller: Caller, address: string | undefined): RateLimitedError | undefined;
}

/**
 * Allows `perSecond` requests per second per bearer token (per client address without one), with
 * bursts of up to one second's worth. Over the limit: 429 with Retry-After.
 */
export function createRateLimiter(perSecond: number, clock: Clock = Date.now): RateLimiter {
  const capacity = Math.max(1, perSecond);
  const buckets = new Map<string, Bucket>();
  return {
    admit: (caller, address) => {
      const bearer = caller.bucket;
      // The token's hash, not the token, is what stays in memory.
      const key = bearer === undefined ? `ip:${address ?? '?'}` : `token:${bearer}`;
      const now = clock();
      const bucket = buckets.get(key) ?? { tokens: capacity, at: now };
      bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
      bucket.at = now;
      if (bucket.tokens < 1) {
        buckets.set(key, bucket);
        const waitSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
        return new RateLimitedError(
          `more than ${perSecond} requests per second for this ${bearer === undefined ? 'address' : 'token'}`,
          waitSeconds,
        );
      }
      bucket.tokens -= 1;
      if (!buckets.has(key) && buckets.size >= MAX_TRACKED_CREDENTIALS) prune(buckets, now, perSecond, capacity);
      buckets.set(key, bucket);
      return undefined;
    },
  };
}

/** The limiter as an Express guard. Express's req.ip is the socket's address (trust proxy is off). */
export function rateLimitGuard(limiter: RateLimiter): RequestHandler {
  return (req, _res, next) => {
    const caller = callerOf(req);
    // A peer's forwarded call was counted where its caller asked.
    next(caller.peer ? undefined : limiter.admit(caller, req.socket.remoteAddress));
  };
}

/** A guard with a limiter of its own. */
export function rateLimit(perSecond: number, clock: Clock = Date.now): RequestHandler {
  return rateLimitGuard(createRateLimiter(perSecond, clock));
}

function prune(buckets: Map<string, Bucket>, now: number, perSecond: number, capacity: number): void {
  for (const [key, b] of buckets) if (b.tokens + ((now - b.at) / 1000) * perSecond >= capacity) buckets.delete(key);
  // Still full of busy credentials: forget the oldest half rather than grow without bound.
  if (buckets.size >= MAX_TRACKED_CREDENTIALS)
    [...buckets.keys()].slice(0, buckets.size / 2).forEach((k) => buckets.delete(k));
}
