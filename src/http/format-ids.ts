/**
 * IDs leave ticketd as decimal strings. Formatting is the hot path of batch requests: every ID is
 * written as ASCII digits straight into the response's bytes (util/decimal.ts), with no string per
 * ID (measured slower than these bytes even for small ordered IDs). Opaque IDs mostly arrive
 * written already, by the encoder thread: they are copied.
 */
import type { IssuedIds, QuotedRun } from '../service/opaque-ids.js';
import { forEachHalves, MAX_DIGITS, writeUint64 } from '../util/decimal.js';

const TWO_32 = 4294967296;
const QUOTE = 34;
const COMMA = 44;
const NEWLINE = 10;

/** The body of `POST …/ids` as JSON: `{"sequence":…,"ids":["…",…]}`. */
export function idsAsJson(sequence: string, ids: IssuedIds): Buffer {
  const head = `{"sequence":"${sequence}","ids":[`;
  return isQuoted(ids) ? copyQuoted(ids, head, ']}') : writeIds(ids, head, ']}', true);
}

/** One ID per line, each line ending in a newline. */
export function idsAsLines(ids: IssuedIds): Buffer {
  return isQuoted(ids) ? quotedAsLines(ids) : writeIds(ids, '', '', false);
}

/** The first ID, as a decimal string. */
export function firstId(ids: IssuedIds): string {
  if (isQuoted(ids)) {
    const first = ids.parts[0]!;
    return Buffer.from(first.buffer, first.byteOffset + 1, first.indexOf(QUOTE, 1) - 1).toString('latin1');
  }
  return ids instanceof BigUint64Array ? ids[0]!.toString() : ids[0]!.first.toString();
}

/** True for opaque IDs written already (the encoder's QuotedRun), told apart from ranges and BigUint64Arrays. */
export function isQuoted(ids: IssuedIds): ids is QuotedRun {
  // Not `'parts' in ids`: on the ranges of every ordered answer, that walks their prototypes.
  return !Array.isArray(ids) && !(ids instanceof BigUint64Array);
}

/** `head`, the quoted IDs without their last comma, then `tail`. */
function copyQuoted(ids: QuotedRun, head: string, tail: string): Buffer {
  let length = 0;
  for (const part of ids.parts) length += part.length;
  const out = Buffer.allocUnsafe(head.length * 3 + length + tail.length);
  let pos = out.write(head, 0);
  for (const part of ids.parts) {
    out.set(part, pos);
    pos += part.length;
  }
  if (ids.count > 0) pos--; // the last comma
  pos += out.write(tail, pos);
  return out.subarray(0, pos);
}

/** The quoted IDs one per line: quotes dropped, each comma a newline. */
function quotedAsLines(ids: QuotedRun): Buffer {
  let length = 0;
  for (const part of ids.parts) length += part.length;
  const out = Buffer.allocUnsafe(length);
  let pos = 0;
  for (const part of ids.parts) {
    for (const byte of part) {
      if (byte === COMMA) out[pos++] = NEWLINE;
      else if (byte !== QUOTE) out[pos++] = byte;
    }
  }
  return out.subarray(0, pos);
}

/** `head`, the IDs (quoted and comma-separated for JSON, else one per line), then `tail`, as bytes. */
function writeIds(ids: Exclude<IssuedIds, QuotedRun>, head: string, tail: string, json: boolean): Buffer {
  const count = ids instanceof BigUint64Array ? ids.length : ids.reduce((n, r) => n + Number(r.last - r.first + 1n), 0);
  const out = Buffer.allocUnsafe(head.length * 3 + count * (MAX_DIGITS + 3) + tail.length);
  let pos = out.write(head, 0);
  const put = (hi: number, lo: number): void => {
    if (json) out[pos++] = QUOTE;
    pos = writeUint64(out, pos, hi, lo);
    if (json) {
      out[pos++] = QUOTE;
      out[pos++] = COMMA;
    } else {
      out[pos++] = NEWLINE;
    }
  };
  if (ids instanceof BigUint64Array) {
    forEachHalves(ids, put);
  } else {
    for (const r of ids) {
      let hi = Number(r.first >> 32n);
      let lo = Number(r.first & 0xffffffffn);
      for (let n = Number(r.last - r.first); n >= 0; n--) {
        put(hi, lo);
        if (++lo === TWO_32) {
          lo = 0;
          hi++;
        }
      }
    }
  }
  if (json && count > 0) pos--; // the last comma
  pos += out.write(tail, pos);
  return out.subarray(0, pos);
}
