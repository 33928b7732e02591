/** What the issuing routes read from a request and answer, shared by the Express routes and the fast path. */
import { BadRequestError } from '../core/errors.js';
import type { IssuedIds } from '../service/opaque-ids.js';
import { JSON_TYPE, TEXT_TYPE, type HttpAnswer } from './answer.js';
import { firstId, idsAsJson, idsAsLines, isQuoted } from './format-ids.js';
import { shown } from '../util/error-text.js';

/** The routes as declared: the `route` label of ticketd_http_* series. */
export const NEXT_ROUTE = '/v1/sequences/:name/next';
export const IDS_ROUTE = '/v1/sequences/:name/ids';

/** IDs are never cached by anyone: a repeated answer would hand the same ID out twice. */
const NO_STORE: readonly [string, string] = ['Cache-Control', 'no-store'];
const JSON_HEADERS: readonly (readonly [string, string])[] = [NO_STORE, ['Content-Type', JSON_TYPE]];
const TEXT_HEADERS: readonly (readonly [string, string])[] = [NO_STORE, ['Content-Type', TEXT_TYPE]];

/** The `count` query parameter (absent: 1); a BadRequestError outside 1..maxCount. */
export function parseCount(value: unknown, maxCount: number): number {
  if (value === undefined) return 1;
  if (typeof value !== 'string' || !/^[0-9]{1,9}$/.test(value)) {
    throw new BadRequestError(`count must be an integer from 1 to ${maxCount}; got ${shown(value, 40)}`);
  }
  const count = Number(value);
  if (count < 1 || count > maxCount)
    throw new BadRequestError(`count must be an integer from 1 to ${maxCount}; got ${count}`);
  return count;
}

/**
 * True when an Accept header mentions text/plain at all: only then does `POST …/ids` negotiate
 * (req.accepts is costly on the hot path), and the fast path leaves such requests to Express.
 */
export function mentionsPlainText(accept: string | undefined): boolean {
  return accept?.includes('text/plain') ?? false;
}

/** `GET …/next`: `{"sequence","id"}`. */
export function nextAnswer(sequence: string, ids: IssuedIds): HttpAnswer {
  return { status: 200, headers: JSON_HEADERS, body: `{"sequence":"${sequence}","id":"${firstId(ids)}"}` };
}

/** `POST …/ids`: `{"sequence","ids"}`, or one ID per line as text/plain. */
export function idsAnswer(sequence: string, ids: IssuedIds, plainText: boolean): HttpAnswer {
  if (plainText) return { status: 200, headers: TEXT_HEADERS, body: idsAsLines(ids) };
  // One ID (count=1, the most common batch) is written as `next` writes its: the same bytes as idsAsJson's, without a Buffer.
  if (isOneId(ids))
    return { status: 200, headers: JSON_HEADERS, body: `{"sequence":"${sequence}","ids":["${firstId(ids)}"]}` };
  const body = idsAsJson(sequence, ids);
  // A short body leaves as a string, in the same socket write as the head.
  return { status: 200, headers: JSON_HEADERS, body: body.length <= SHORT_BODY_BYTES ? body.toString('latin1') : body };
}

/** True when the IDs are exactly one. */
function isOneId(ids: IssuedIds): boolean {
  if (isQuoted(ids)) return ids.count === 1;
  return ids instanceof BigUint64Array ? ids.length === 1 : ids.length === 1 && ids[0]!.first === ids[0]!.last;
}

/** Below this, copying the body into a string costs less than a second socket write. */
const SHORT_BODY_BYTES = 1024;

/** A JSON answer of the issuing routes that carries no IDs list (strict ranges, blocks). */
export function jsonAnswer(body: string): HttpAnswer {
  return { status: 200, headers: JSON_HEADERS, body };
}
