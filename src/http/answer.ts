/**
 * An HTTP answer as data (status, headers, body) and the one function that writes it. The issuing
 * routes and problem+json build answers here, so the Express routes and the fast path
 * (fast-path.ts) send the same bytes by construction.
 */
import type { ServerResponse } from 'node:http';

/** What one request is answered with. */
export interface HttpAnswer {
  readonly status: number;
  /** Header name and value pairs, written in this order. */
  readonly headers: readonly (readonly [string, string])[];
  /** A string is written with the head in one socket write; a Buffer (batches of IDs) is written after it. */
  readonly body: string | Buffer;
}

/** Content types as Express's res.type().send() spelled them before answers were data. */
export const JSON_TYPE = 'application/json; charset=utf-8';
export const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';
export const TEXT_TYPE = 'text/plain; charset=utf-8';

/**
 * Writes the answer with one writeHead and one end: each res.setHeader costs a validation and a map entry, and a string body leaves with the
 * head in one write (a Buffer costs a writev of two).
 */
export function writeAnswer(res: ServerResponse, answer: HttpAnswer): void {
  const { body } = answer;
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  const headers: string[] = [];
  for (const [name, value] of answer.headers) headers.push(name, value);
  headers.push('Content-Length', String(length));
  // The array form keeps headers set before (Allow, from the router): writeHead replaces only its own names.
  res.writeHead(answer.status, headers);
  res.end(body);
}
