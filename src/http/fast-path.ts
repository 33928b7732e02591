/**
 * `GET /v1/sequences/{name}/next` and `POST /v1/sequences/{name}/ids[?count=N]`, answered ahead of
 * Express for requests of the plain shape, on the same http.Server. Express's per-request work
 * (router walk, request and response decoration, middleware) cost ~85% of an ID from the cache
 * (docs/performance.md). The guards, the answers and problem+json are the ones the Express routes
 * use (issuing-guards.ts, issuing-answers.ts, problem.ts); anything of another shape (a body, a
 * text/plain Accept, HEAD, another method, an unusual path or query) goes to Express untouched,
 * before anything was checked or counted.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from '../core/caller.js';
import type { Logger } from '../logger.js';
import type { Audit } from './audit.js';
import type { IssuedIds } from '../service/opaque-ids.js';
import type { TicketService } from '../service/ticket-service.js';
import { writeAnswer, type HttpAnswer } from './answer.js';
import type { IssuingGuards } from './issuing-guards.js';
import { IDS_ROUTE, idsAnswer, mentionsPlainText, NEXT_ROUTE, nextAnswer, parseCount } from './issuing-answers.js';
import { isExpectedError, logUnexpected, problemAnswer, type Problem } from './problem.js';

/** The plain shapes: a valid sequence name, and for ids at most a `count` of digits (anything else is Express's to judge). */
const PLAIN_PATH = /^\/v1\/sequences\/([a-z][a-z0-9_]{0,47})\/(?:(next)|ids(?:\?count=([0-9]{1,9}))?)$/;

/** What the fast path needs: the app's own service, guards and counting. */
export interface FastPathOptions {
  readonly service: TicketService;
  readonly guards: IssuingGuards;
  readonly maxCount: number;
  readonly logger: Logger;
  readonly observe?: ((route: string, method: string, status: number, seconds: number) => void) | undefined;
  /** What this caller may read of a problem (the Express error handler's rewrite). */
  readonly shownTo: (caller: Caller) => ((problem: Problem) => Problem) | undefined;
  /** Where a refusal is logged (audit.ts); without it, nowhere. */
  readonly audit?: Audit | undefined;
}

/** Answers the request and returns true, or returns false having touched nothing (Express then answers). */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

/** The fast path of the issuing routes. */
export function createFastPath(options: FastPathOptions): FastPath {
  const { service, guards, maxCount, logger, observe, shownTo, audit } = options;
  return (req, res) => {
    const match = PLAIN_PATH.exec(req.url ?? '');
    if (match === null) return false;
    const name = match[1]!;
    const isNext = match[2] !== undefined;
    const method = req.method;
    if (method !== (isNext ? 'GET' : 'POST')) return false;
    const headers = req.headers;
    // A body is Express's to read, and to refuse past its limit.
    const length = headers['content-length'];
    if ((length !== undefined && length !== '0') || headers['transfer-encoding'] !== undefined) return false;
    if (!isNext && mentionsPlainText(headers.accept)) return false;

    const started = performance.now();
    const route = isNext ? NEXT_ROUTE : IDS_ROUTE;
    const answer = (reply: HttpAnswer): void => {
      writeAnswer(res, reply);
      observe?.(route, method, reply.status, (performance.now() - started) / 1000);
    };
    const issued = (ids: IssuedIds): HttpAnswer => (isNext ? nextAnswer(name, ids) : idsAnswer(name, ids, false));
    const caller = guards.identify(req);
    const failed = (error: unknown): void => {
      if (!isExpectedError(error)) logUnexpected(logger, method, (req.url ?? '').split('?')[0]!, error);
      // A failure after the answer was written (in counting it) cannot replace it: logged only.
      if (!res.headersSent) answer(problemAnswer(error, shownTo(caller)));
    };
    try {
      // Guards first, then the count: the order of the Express route (guards, body, handler).
      const refused = guards.refusal(name, caller, req.socket.remoteAddress);
      if (refused !== undefined) {
        audit?.refused(caller, `${method} ${route}`, name, refused);
        throw refused;
      }
      const count = isNext ? 1 : parseCount(match[3], maxCount);
      const ids = service.issue(name, count, caller);
      if (ids instanceof Promise) ids.then((waited) => answer(issued(waited))).catch(failed);
      else answer(issued(ids));
    } catch (error) {
      failed(error);
    }
    return true;
  };
}
