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
  const { service, guards, maxCount } = options;
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

    const asked: Asked = { options, req, res, name, isNext, started: performance.now() };
    // Guards first, then the count: the order of the Express route (guards, body, handler).
    const caller = guards.identify(req);
    let ids: IssuedIds | Promise<IssuedIds>;
    try {
      const refused = guards.refusal(name, caller, req);
      if (refused !== undefined) {
        options.audit?.refused(caller, `${method} ${isNext ? NEXT_ROUTE : IDS_ROUTE}`, name, refused);
        throw refused;
      }
      ids = service.issue(name, isNext ? 1 : parseCount(match[3], maxCount), caller);
    } catch (error) {
      failed(asked, caller, error);
      return true;
    }
    // Answered here when the cache covered the request (almost always): no closure is made for it.
    if (!(ids instanceof Promise)) answer(asked, issued(asked, ids));
    else
      ids.then(
        (waited) => answer(asked, issued(asked, waited)),
        (error: unknown) => failed(asked, caller, error),
      );
    return true;
  };
}

/** One request the fast path took, and what its answer needs. */
interface Asked {
  readonly options: FastPathOptions;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly name: string;
  readonly isNext: boolean;
  readonly started: number;
}

function issued(asked: Asked, ids: IssuedIds): HttpAnswer {
  return asked.isNext ? nextAnswer(asked.name, ids) : idsAnswer(asked.name, ids, false);
}

function answer(asked: Asked, reply: HttpAnswer): void {
  writeAnswer(asked.res, reply);
  const route = asked.isNext ? NEXT_ROUTE : IDS_ROUTE;
  asked.options.observe?.(route, asked.req.method!, reply.status, (performance.now() - asked.started) / 1000);
}

function failed(asked: Asked, caller: Caller, error: unknown): void {
  const { req, res, options } = asked;
  if (!isExpectedError(error)) logUnexpected(options.logger, req.method, (req.url ?? '').split('?')[0]!, error);
  // A failure after the answer was written (in counting it) cannot replace it: logged only.
  if (!res.headersSent) answer(asked, problemAnswer(error, options.shownTo(caller)));
}
