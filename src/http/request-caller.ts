/**
 * Who sent a request, read once from its Authorization header (or the peer listener's check) as it
 * arrives, and kept beside the request for the guards, routes and audit log to read.
 */
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ANONYMOUS, peerCaller, TOKEN_NAME_PATTERN, UNKNOWN_TOKEN, type Caller } from '../core/caller.js';
import { ON_BEHALF_OF_HEADER } from '../service/peer-proof.js';
import type { Credentials } from './credentials.js';

/** Counts a request by its caller's name (metrics.ts, `called`). */
export type CountCaller = (name: string) => void;

const callers = new WeakMap<IncomingMessage, Caller>();

/** The request's caller, counted, without keeping it beside the request (the fast path, which answers it alone). */
export function callerOnce(req: IncomingMessage, credentials: Credentials, count?: CountCaller): Caller {
  const caller = callers.get(req) ?? credentials.callerOf(req.headers.authorization);
  count?.(caller.name);
  return caller;
}

/** Reads the request's caller once, counts it, and keeps it beside the request; a peer marked first stays a peer. */
export function identify(req: IncomingMessage, credentials: Credentials, count?: CountCaller): Caller {
  let caller = callers.get(req);
  if (caller === undefined) {
    caller = credentials.callerOf(req.headers.authorization);
    callers.set(req, caller);
  }
  count?.(caller.name);
  return caller;
}

/** Marks a request as a peer's (the peer listener checked its proof) before the app reads its caller. */
export function markPeer(req: IncomingMessage): void {
  const named = req.headers[ON_BEHALF_OF_HEADER];
  const onBehalfOf =
    typeof named === 'string' && (TOKEN_NAME_PATTERN.test(named) || named === ANONYMOUS) ? named : UNKNOWN_TOKEN;
  callers.set(req, peerCaller(onBehalfOf));
}

/** The caller identify() read for this request. */
export function callerOf(req: IncomingMessage): Caller {
  const caller = callers.get(req);
  // identifyCallers runs first on every route: a request without a caller is a wiring mistake.
  if (caller === undefined) throw new Error(`no caller was read for ${req.method} ${req.url}`);
  return caller;
}

/** Express middleware that reads every request's caller (identify) before any route. */
export function identifyCallers(credentials: Credentials, count?: CountCaller): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    identify(req, credentials, count);
    next();
  };
}
