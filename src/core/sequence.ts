/** Sequence names and settings: validated here, before any SQL is built from them. */
import { BadRequestError } from '../errors.js';
import { MAX_UINT64, type BlockSettings } from './ticket-math.js';

/** Names become table names, so they are held to this pattern before any SQL sees them. */
export const SEQUENCE_NAME_PATTERN = /^[a-z][a-z0-9_]{0,47}$/;

/** The sequence `init` creates. */
export const DEFAULT_SEQUENCE_NAME = 'default';
/** Block size of the `default` sequence: one ticket is worth 10,000 IDs. */
export const DEFAULT_BLOCK_SIZE = 10_000n;
/** Upper bound on a block size, so that a block is a sensible unit of caching and leasing. */
export const MAX_BLOCK_SIZE = 1_000_000_000n;

/** A sequence as stored on the backends. */
export interface SequenceSettings extends BlockSettings {
  readonly name: string;
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
  throw new BadRequestError(
    `${field} must be an integer from 0 to ${MAX_UINT64}; got ${JSON.stringify(value)?.slice(0, 80)}`,
  );
}

/** Validates the settings of a new sequence; blockSize is required, the rest have defaults. */
export function parseSequenceSettings(name: string, body: unknown): SequenceSettings {
  assertSequenceName(name);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new BadRequestError('body must be a JSON object with blockSize, and optionally startAfter and maxId');
  }
  const fields = body as Record<string, unknown>;
  const unknownFields = Object.keys(fields).filter((k) => !['blockSize', 'startAfter', 'maxId'].includes(k));
  if (unknownFields.length > 0) {
    throw new BadRequestError(`unknown field(s) ${unknownFields.join(', ')}; allowed: blockSize, startAfter, maxId`);
  }
  if (fields.blockSize === undefined) throw new BadRequestError('blockSize is required');
  const blockSizeProblem = `blockSize must be an integer from 1 to ${MAX_BLOCK_SIZE}; got ${JSON.stringify(fields.blockSize)?.slice(0, 80)}`;
  let blockSize: bigint;
  try {
    blockSize = parseUnsigned(fields.blockSize, 'blockSize');
  } catch (error) {
    throw new BadRequestError(blockSizeProblem, { cause: error });
  }
  if (blockSize < 1n || blockSize > MAX_BLOCK_SIZE) throw new BadRequestError(blockSizeProblem);
  const startAfter = fields.startAfter === undefined ? 0n : parseUnsigned(fields.startAfter, 'startAfter');
  const maxId = fields.maxId === undefined ? MAX_UINT64 : parseUnsigned(fields.maxId, 'maxId');
  if (maxId <= startAfter) {
    throw new BadRequestError(`maxId (${maxId}) must be greater than startAfter (${startAfter})`);
  }
  return Object.freeze({ name, blockSize, startAfter, maxId });
}

/** True when two sequences would hand out the same IDs from the same tickets. */
export function sameSettings(a: SequenceSettings, b: SequenceSettings): boolean {
  return a.blockSize === b.blockSize && a.startAfter === b.startAfter && a.maxId === b.maxId;
}

/** The sequence's settings as JSON: integers as decimal strings, like IDs. */
export function settingsToJson(s: SequenceSettings): Record<string, string> {
  return {
    name: s.name,
    blockSize: String(s.blockSize),
    startAfter: String(s.startAfter),
    maxId: String(s.maxId),
  };
}
