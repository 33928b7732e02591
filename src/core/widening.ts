/**
 * Widening a sequence: its maxId may grow (a legacy column moved from INT to BIGINT), nothing else
 * may change, and it never shrinks. Why growing keeps every ID unique: a ticket t maps to
 * [t·B, t·B + B − 1] whatever maxId is; maxId only says which tickets may be served. A larger one
 * lets later tickets serve, and a process that still holds the smaller one only stops early.
 */
import { BadRequestError, SequenceConflictError } from './errors.js';
import { parseUnsigned, sameButMaxId, type SequenceSettings } from './sequence.js';

/** What a PATCH asks: the new maxId; anything else in the body is refused by name. */
export function parseWidening(body: unknown): bigint {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new BadRequestError('body must be a JSON object such as {"maxId":"9223372036854775807"}');
  const fields = body as Record<string, unknown>;
  const other = Object.keys(fields).filter((k) => k !== 'maxId');
  if (other.length > 0)
    throw new BadRequestError(
      `only maxId can change; ${other.map((k) => JSON.stringify(k)).join(', ')} ${other.length === 1 ? 'is' : 'are'} fixed for the life of a sequence`,
    );
  if (fields.maxId === undefined) throw new BadRequestError('body must give maxId, the new largest ID');
  return parseUnsigned(fields.maxId, 'maxId');
}

/**
 * Judges a new maxId against the sequence as it is: true when it grows, false when it is the same
 * (a repeat that completes an earlier widening). Lowering, and any change to an opaque sequence,
 * are refused.
 */
export function judgeWidening(current: SequenceSettings, maxId: bigint): boolean {
  if (current.ids === 'opaque' && maxId !== current.maxId) {
    throw new SequenceConflictError(
      `sequence ${current.name} is opaque: its IDs are a keyed permutation of (startAfter, maxId], so another maxId would move every ID already issued and IDs would repeat (docs/opaque-ids.md); create a new sequence instead`,
    );
  }
  if (current.ids === 'strict' && maxId !== current.maxId) {
    throw new SequenceConflictError(
      `sequence ${current.name} is strict: this release does not widen strict sequences (docs/strict-sequences.md); create a new sequence instead`,
    );
  }
  if (maxId < current.maxId) {
    throw new SequenceConflictError(
      `sequence ${current.name} has maxId ${current.maxId}; it can only grow (IDs up to it may already be issued), not go down to ${maxId}`,
    );
  }
  return maxId > current.maxId;
}

/**
 * What a process serving `current` makes of the sequence's rows as the backends that answered hold
 * them now: retired on any of them ends it; a larger maxId on every one of them widens it to the
 * smallest of theirs (the bound each has); anything else leaves it as it is.
 */
export function judgeRows(
  current: SequenceSettings,
  rows: readonly SequenceSettings[],
): { readonly kind: 'retired' } | { readonly kind: 'widened'; readonly maxId: bigint } | { readonly kind: 'same' } {
  if (rows.some((r) => r.retired === true)) return { kind: 'retired' };
  if (rows.length === 0 || !rows.every((r) => sameButMaxId(r, current))) return { kind: 'same' };
  const maxId = rows.reduce((least, r) => (r.maxId < least ? r.maxId : least), rows[0]!.maxId);
  return maxId > current.maxId ? { kind: 'widened', maxId } : { kind: 'same' };
}
