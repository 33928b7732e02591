/** The one place errors become RFC 9457 problem+json responses. */
import type { ServerResponse } from 'node:http';
import type { Logger } from '../logger.js';
import { PROBLEM_TYPE, writeAnswer, type HttpAnswer } from './answer.js';
import {
  BackendsUnavailableError,
  PoolExhaustedError,
  RateLimitedError,
  TicketdError,
  UnauthorizedError,
} from '../core/errors.js';

/** Problem type URIs are relative references under this path; docs/reference.md documents each one. */
export const PROBLEM_TYPE_BASE = '/problems/';

/** A problem document. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: string;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  421: 'Misdirected Request',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Each code's HTTP status and problem type (`/problems/<slug>`): the one place ticketd's errors meet HTTP. */
const PROBLEM_TYPES: Readonly<Record<string, { readonly status: number; readonly slug: string }>> = Object.freeze({
  TICKETD_CONFIG_INVALID: { status: 500, slug: 'config-invalid' },
  TICKETD_BAD_REQUEST: { status: 400, slug: 'bad-request' },
  TICKETD_UNAUTHORIZED: { status: 401, slug: 'unauthorized' },
  TICKETD_FORBIDDEN: { status: 403, slug: 'forbidden' },
  TICKETD_NOT_FOUND: { status: 404, slug: 'not-found' },
  TICKETD_METHOD_NOT_ALLOWED: { status: 405, slug: 'method-not-allowed' },
  TICKETD_SEQUENCE_NOT_FOUND: { status: 404, slug: 'sequence-not-found' },
  TICKETD_ID_NOT_ISSUED: { status: 404, slug: 'id-not-issued' },
  TICKETD_SEQUENCE_CONFLICT: { status: 409, slug: 'sequence-conflict' },
  TICKETD_SEQUENCE_EXHAUSTED: { status: 409, slug: 'sequence-exhausted' },
  TICKETD_SEQUENCE_RETIRED: { status: 410, slug: 'sequence-retired' },
  TICKETD_BACKENDS_UNAVAILABLE: { status: 503, slug: 'backends-unavailable' },
  TICKETD_RATE_LIMITED: { status: 429, slug: 'rate-limited' },
  TICKETD_BACKEND_MISCONFIGURED: { status: 503, slug: 'backend-misconfigured' },
  TICKETD_UPGRADE_REQUIRED: { status: 503, slug: 'upgrade-required' },
  TICKETD_SCHEMA_OUTDATED: { status: 503, slug: 'schema-outdated' },
  TICKETD_TICKET_CLAIMED_BEFORE: { status: 503, slug: 'ticket-claimed-before' },
  TICKETD_COUNTER_OVERFLOW: { status: 409, slug: 'counter-overflow' },
  TICKETD_BACKEND_ACCESS_DENIED: { status: 503, slug: 'backend-access-denied' },
  TICKETD_BACKEND_TLS: { status: 503, slug: 'backend-tls' },
  TICKETD_UNKNOWN_BACKEND: { status: 404, slug: 'unknown-backend' },
  TICKETD_NO_MYSQLD: { status: 500, slug: 'no-mysqld' },
  TICKETD_LAUNCHER_FAILED: { status: 500, slug: 'launcher-failed' },
  TICKETD_DEV_RUNNING: { status: 500, slug: 'dev-running' },
  TICKETD_PORT_IN_USE: { status: 500, slug: 'port-in-use' },
  TICKETD_MIGRATION_REFUSED: { status: 409, slug: 'migration-refused' },
  TICKETD_FENCE_REFUSED: { status: 409, slug: 'fence-refused' },
  TICKETD_FLEET_CHANGE_REFUSED: { status: 409, slug: 'fleet-change-refused' },
  TICKETD_RESTORE_REFUSED: { status: 409, slug: 'restore-refused' },
  TICKETD_POOL_NOT_FOUND: { status: 404, slug: 'pool-not-found' },
  TICKETD_POOL_CONFLICT: { status: 409, slug: 'pool-conflict' },
  TICKETD_POOL_EXHAUSTED: { status: 503, slug: 'pool-exhausted' },
  TICKETD_LEASE_LOST: { status: 409, slug: 'lease-lost' },
  TICKETD_NOT_LEADER: { status: 421, slug: 'not-leader' },
  TICKETD_STRICT_NO_BLOCKS: { status: 409, slug: 'strict-no-blocks' },
  TICKETD_LEASE_INVALID: { status: 403, slug: 'lease-invalid' },
  TICKETD_LEASE_RETURNED: { status: 409, slug: 'lease-returned' },
});

/** Builds the problem document for an error (unknown errors become an opaque 500). */
export function toProblem(error: unknown): Problem {
  if (error instanceof TicketdError) {
    const { status, slug } = PROBLEM_TYPES[error.code] ?? { status: 500, slug: 'internal' };
    return {
      type: PROBLEM_TYPE_BASE + slug,
      title: TITLES[status] ?? 'Error',
      status,
      detail: error.message,
      code: error.code,
    };
  }
  const http = httpErrorOf(error);
  if (http !== undefined) {
    return {
      type: PROBLEM_TYPE_BASE + 'bad-request',
      title: TITLES[http.status] ?? 'Bad Request',
      status: http.status,
      detail: http.message,
      code: 'TICKETD_BAD_REQUEST',
    };
  }
  return {
    type: PROBLEM_TYPE_BASE + 'internal',
    title: TITLES[500]!,
    status: 500,
    detail: 'internal error; see the server log',
    code: 'TICKETD_INTERNAL',
  };
}

/**
 * The problem+json answer to an error, with Retry-After and WWW-Authenticate where they apply; `shown`
 * rewrites what the requester may not read (backend-names.ts: clients without the admin token).
 */
export function problemAnswer(error: unknown, shown: (problem: Problem) => Problem = (p) => p): HttpAnswer {
  const problem = shown(toProblem(error));
  const headers: [string, string][] = [];
  if (
    error instanceof BackendsUnavailableError ||
    error instanceof RateLimitedError ||
    error instanceof PoolExhaustedError
  )
    headers.push(['Retry-After', String(error.retryAfterSeconds)]);
  if (error instanceof UnauthorizedError) headers.push(['WWW-Authenticate', 'Bearer realm="ticketd"']);
  headers.push(['Content-Type', PROBLEM_TYPE]);
  return { status: problem.status, headers, body: JSON.stringify(problem) };
}

/** Sends an error as problem+json (headers set on `res` before, such as Allow, stay). */
export function sendProblem(res: ServerResponse, error: unknown, shown?: (problem: Problem) => Problem): void {
  writeAnswer(res, problemAnswer(error, shown));
}

/** True for errors a request can cause and ticketd names (no stack in the log for them). */
export function isExpectedError(error: unknown): boolean {
  if (error instanceof TicketdError) return true;
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
}

/** An error no request should cause: logged with its stack (the client sees an opaque 500). */
export function logUnexpected(logger: Logger, method: string | undefined, path: string, error: unknown): void {
  logger.error({ method, path, err: error instanceof Error ? error.stack : String(error) }, 'request failed');
}

/**
 * Errors raised by Express's body parsers carry a 4xx status and a message safe to show; the
 * router's URIError for a path like `/v1/sequences/%ZZ` carries status 400 and names the bad param.
 */
function httpErrorOf(error: unknown): { status: number; message: string } | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { status, expose, message, type, limit } = error as {
    status?: unknown;
    expose?: unknown;
    message?: unknown;
    type?: unknown;
    limit?: unknown;
  };
  const safe = expose === true || error instanceof URIError;
  if (typeof status === 'number' && status >= 400 && status < 500 && safe && typeof message === 'string') {
    // body-parser's own texts are a parser's ("Unexpected token n in JSON at position 1").
    if (type === 'entity.parse.failed')
      return { status, message: 'body is not valid JSON; send an object such as {"blockSize":100}' };
    if (type === 'entity.too.large')
      return {
        status,
        message: `body is larger than ${typeof limit === 'number' ? `${limit / 1024} KiB` : 'allowed'}`,
      };
    // The router's words ("Failed to decode param '%ZZ'") name its internals, not the request.
    if (error instanceof URIError) {
      const bad = /'(.*)'$/.exec(message)?.[1] ?? '';
      return {
        status,
        message: `the path holds ${JSON.stringify(bad.slice(0, 60))}, which is not valid percent-encoding: each % must start a %XX escape of UTF-8 bytes`,
      };
    }
    return { status, message: message.slice(0, 200) };
  }
  return undefined;
}

/**
 * The raw HTTP answer to a request Node's parser refused before Express saw it (a request line
 * or headers over the size limit: 431; anything malformed: 400), as problem+json.
 */
export function parserRefusal(code: string | undefined): string {
  const [status, detail] =
    code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'request line and headers are larger than the server accepts (16 KiB); is the URL or a header very long?']
      : [400, 'malformed HTTP request'];
  const body = JSON.stringify({
    type: PROBLEM_TYPE_BASE + 'bad-request',
    title: status === 431 ? 'Request Header Fields Too Large' : 'Bad Request',
    status,
    detail,
    code: 'TICKETD_BAD_REQUEST',
  });
  const reason = status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}
