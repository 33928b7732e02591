/** Sequence names and settings: validated here, before any SQL is built from them. */
import { MIN_OPAQUE_DOMAIN, type PermutationScheme } from 'ticketd-client';
import { BadRequestError } from './errors.js';
import { DEFAULT_MAX_ID, LEGACY_DEFAULT_MAX_ID, MAX_UINT64, type BlockSettings } from './blocks.js';
import { shown } from '../util/error-text.js';

/** Names become table names, so they are held to this pattern before any SQL sees them. */
export const SEQUENCE_NAME_PATTERN = /^[a-z][a-z0-9_]{0,47}$/;

/** The sequence `init` creates. */
export const DEFAULT_SEQUENCE_NAME = 'default';
/** Block size of the `default` sequence: one ticket is worth 10,000 IDs. */
export const DEFAULT_BLOCK_SIZE = 10_000n;
/** Upper bound on a block size, so that a block is a sensible unit of caching and leasing. */
export const MAX_BLOCK_SIZE = 1_000_000_000n;

/**
 * How a sequence's IDs look: consecutive numbers, a keyed permutation of them (docs/opaque-ids.md,
 * "In use"), or numbers in real-time order across every front end (docs/strict-sequences.md).
 */
export type IdMode = 'ordered' | 'opaque' | 'strict';
const ID_MODES: readonly IdMode[] = ['ordered', 'opaque', 'strict'];
const FIELDS = ['blockSize', 'startAfter', 'maxId', 'ids', 'reuse'];

/** A sequence as stored on the backends. */
export interface SequenceSettings extends BlockSettings {
  /** Retired for good (DELETE): nothing of it is issued again. */
  readonly retired?: true;
  /**
   * An ordered sequence whose unused IDs are given back and reused (core/returned-ranges.ts): its IDs
   * are then no longer always larger than those handed out before. Opaque ones always are; strict never.
   */
  readonly reuse?: true;
  readonly name: string;
  readonly ids: IdMode;
  /**
   * An opaque sequence's key, once created or read from a backend. Non-enumerable, so neither JSON,
   * a log line nor an object spread carries it anywhere.
   */
  readonly key?: Uint8Array;
  /** An opaque sequence's permutation scheme, stored with its key; it never changes. */
  readonly scheme?: PermutationScheme;
  /**
   * The oldest ticketd that understands the sequence, when it is stored gated (core/versions.ts);
   * undefined for a sequence every ticketd since 0.2 reads right, or one not gated yet.
   */
  readonly needsVersion?: string;
  /**
   * Set on a request that gave no maxId: DEFAULT_MAX_ID applies to a new sequence, and an existing
   * one created with the old default (LEGACY_DEFAULT_MAX_ID) keeps it (settleDefaultMaxId).
   */
  readonly maxIdDefaulted?: true;
}

/** The settings with the opaque sequence's key (non-enumerable) and scheme attached. */
export function withKey(settings: SequenceSettings, key: Uint8Array, scheme: PermutationScheme): SequenceSettings {
  // Every enumerable field goes along (needsVersion, retired: a copy that named fields lost `retired`,
  // and a retired opaque sequence was served again); the key is attached below, non-enumerable.
  const copy = { ...settings, scheme };
  Object.defineProperty(copy, 'key', { value: key, enumerable: false });
  return Object.freeze(copy);
}

/** Throws BadRequestError unless the name matches the sequence name pattern. */
export function assertSequenceName(name: string): void {
  if (!SEQUENCE_NAME_PATTERN.test(name)) {
    throw new BadRequestError(
      `sequence name ${JSON.stringify(name.slice(0, 80))} does not match ${SEQUENCE_NAME_PATTERN.source}`,
    );
  }
}

/** Parses an unsigned integer given as a JSON number (exact) or a decimal string. */
export function parseUnsigned(value: unknown, field: string): bigint {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new BadRequestError(
        `${field} must be a non-negative integer below 2^53, or a decimal string; got ${value}`,
      );
    }
    return BigInt(value);
  }
  if (typeof value === 'string' && /^[0-9]{1,20}$/.test(value)) {
    const parsed = BigInt(value);
    if (parsed <= MAX_UINT64) return parsed;
  }
  throw new BadRequestError(`${field} must be an integer from 0 to ${MAX_UINT64}; got ${shown(value)}`);
}

/** Validates the settings of a new sequence; blockSize is required, the rest have defaults. */
export function parseSequenceSettings(name: string, body: unknown): SequenceSettings {
  assertSequenceName(name);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new BadRequestError(
      'body must be a JSON object with blockSize, and optionally startAfter, maxId, ids and reuse',
    );
  }
  const fields = body as Record<string, unknown>;
  const unknownFields = Object.keys(fields).filter((k) => !FIELDS.includes(k));
  if (unknownFields.length > 0) {
    throw new BadRequestError(`unknown field(s) ${unknownFields.join(', ')}; allowed: ${FIELDS.join(', ')}`);
  }
  if (fields.blockSize === undefined) throw new BadRequestError('blockSize is required');
  const blockSizeProblem = `blockSize must be an integer from 1 to ${MAX_BLOCK_SIZE}; got ${shown(fields.blockSize)}`;
  let blockSize: bigint;
  try {
    blockSize = parseUnsigned(fields.blockSize, 'blockSize');
  } catch (error) {
    throw new BadRequestError(blockSizeProblem, { cause: error });
  }
  if (blockSize < 1n || blockSize > MAX_BLOCK_SIZE) throw new BadRequestError(blockSizeProblem);
  const startAfter = fields.startAfter === undefined ? 0n : parseUnsigned(fields.startAfter, 'startAfter');
  const maxIdDefaulted = fields.maxId === undefined;
  const maxId = maxIdDefaulted ? DEFAULT_MAX_ID : parseUnsigned(fields.maxId, 'maxId');
  if (maxId <= startAfter) {
    throw new BadRequestError(`maxId (${maxId}) must be greater than startAfter (${startAfter})`);
  }
  const ids = fields.ids ?? 'ordered';
  if (!ID_MODES.includes(ids as IdMode)) {
    throw new BadRequestError(`ids must be "ordered", "opaque" or "strict"; got ${shown(ids)}`);
  }
  // A permutation of a small domain hides little: an observer soon holds a large share of all IDs.
  if (ids === 'opaque' && maxId - startAfter < MIN_OPAQUE_DOMAIN) {
    throw new BadRequestError(
      `ids "opaque" needs at least ${MIN_OPAQUE_DOMAIN} IDs between startAfter and maxId; this sequence has ${maxId - startAfter}`,
    );
  }
  return Object.freeze({
    name,
    blockSize,
    startAfter,
    maxId,
    ids: ids as IdMode,
    ...(parseReuse(ids as IdMode, fields.reuse) ? { reuse: true as const } : {}),
    ...(maxIdDefaulted ? { maxIdDefaulted: true as const } : {}),
  });
}

/** True when an ordered sequence asks to take IDs back; opaque ones always do (stored as nothing), strict ones never. */
function parseReuse(ids: IdMode, reuse: unknown): boolean {
  if (reuse === undefined) return false;
  if (typeof reuse !== 'boolean') throw new BadRequestError(`reuse must be true or false; got ${shown(reuse)}`);
  if (ids === 'strict' && reuse)
    throw new BadRequestError('reuse cannot be true for ids "strict": a reused ID would leave real-time order');
  if (ids === 'opaque' && !reuse)
    throw new BadRequestError('reuse cannot be false for ids "opaque": an opaque sequence always takes IDs back');
  return ids === 'ordered' && reuse;
}

/**
 * The settings to create, given the rows the backends hold: a request without maxId for a sequence
 * that exists with the old default (2^64 − 1) and otherwise the same settings is that sequence, so
 * repeating a PUT or `init` after an upgrade is not a conflict; anything else keeps what was asked.
 */
export function settleDefaultMaxId(requested: SequenceSettings, rows: readonly SequenceSettings[]): SequenceSettings {
  const { maxIdDefaulted, ...settings } = requested;
  if (maxIdDefaulted !== true) return requested;
  const legacy = rows.find((r) => r.maxId === LEGACY_DEFAULT_MAX_ID && sameButMaxId(r, settings));
  return Object.freeze(legacy === undefined ? settings : { ...settings, maxId: LEGACY_DEFAULT_MAX_ID });
}

/**
 * True when two sequences would hand out the same IDs from the same tickets. Keys and schemes are
 * compared when both sides have one (settings parsed from a request have none until the sequence exists).
 */
export function sameSettings(a: SequenceSettings, b: SequenceSettings): boolean {
  return sameExceptKey(a, b) && sameKey(a.key, b.key);
}

/**
 * True when two rows are one sequence, one of them widened (a larger maxId) and the other not yet:
 * a widening in progress, or a process that has not re-read it. Both map tickets to the same IDs.
 */
export function sameButMaxId(a: SequenceSettings, b: SequenceSettings): boolean {
  // Field by field, not a spread copy: the key is a non-enumerable property, which a spread drops.
  return sameExceptKeyAndMaxId(a, b) && sameKey(a.key, b.key);
}

/** True when two sequences agree on everything but hold different keys (messages say so, never the keys). */
export function onlyKeyDiffers(a: SequenceSettings, b: SequenceSettings): boolean {
  return sameExceptKey(a, b) && !sameKey(a.key, b.key);
}

function sameExceptKey(a: SequenceSettings, b: SequenceSettings): boolean {
  return sameExceptKeyAndMaxId(a, b) && a.maxId === b.maxId;
}

function sameExceptKeyAndMaxId(a: SequenceSettings, b: SequenceSettings): boolean {
  const sameScheme = a.scheme === undefined || b.scheme === undefined || a.scheme === b.scheme;
  const sameReuse = (a.reuse === true) === (b.reuse === true);
  return a.blockSize === b.blockSize && a.startAfter === b.startAfter && a.ids === b.ids && sameScheme && sameReuse;
}

function sameKey(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined) return true;
  if (a.length !== b.length) return false;
  // Every byte is compared, whatever differs first: the time taken says nothing of the key.
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

/** How a sequence found differs from the one wanted, in words that never print a key; undefined when they agree. */
export function conflictOf(found: SequenceSettings, wanted: SequenceSettings): string | undefined {
  if (sameSettings(found, wanted)) return undefined;
  return onlyKeyDiffers(found, wanted) ? 'another key' : describeSettings(found);
}

/** The settings in words, for messages: never the key. */
export function describeSettings(s: SequenceSettings): string {
  return `blockSize=${s.blockSize} startAfter=${s.startAfter} maxId=${s.maxId} ids=${s.ids}${s.scheme === undefined ? '' : ` scheme=${s.scheme}`}${s.reuse === true ? ' reuse=true' : ''}`;
}

/** The sequence's settings as JSON: integers as decimal strings, like IDs. */
export function settingsToJson(s: SequenceSettings): Record<string, string | boolean> {
  return {
    name: s.name,
    blockSize: String(s.blockSize),
    startAfter: String(s.startAfter),
    maxId: String(s.maxId),
    ids: s.ids,
    ...(s.scheme === undefined ? {} : { scheme: s.scheme }),
    ...(s.retired === true ? { retired: true } : {}),
    ...(s.reuse === true ? { reuse: true } : {}),
  };
}
