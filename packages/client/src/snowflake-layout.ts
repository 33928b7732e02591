/** The bit layout of Snowflake IDs: time since an epoch, worker ID, sequence within a millisecond. */
import { SnowflakeLayoutError } from './errors.js';

/** Widths in bits, most significant first; they add up to at most 63, so IDs stay positive as signed 64-bit. */
export interface SnowflakeLayout {
  readonly timeBits: number;
  readonly workerBits: number;
  readonly sequenceBits: number;
}

/** Twitter's layout: 41 bits of milliseconds (69 years), 10 of worker ID, 12 of sequence (4,096 IDs per ms). */
export const DEFAULT_LAYOUT: SnowflakeLayout = Object.freeze({ timeBits: 41, workerBits: 10, sequenceBits: 12 });
/** Default epoch: 2024-01-01T00:00:00Z. */
export const DEFAULT_SNOWFLAKE_EPOCH_MS = Date.UTC(2024, 0, 1);

/** An ID taken apart. */
export interface SnowflakeParts {
  /** Unix milliseconds. */
  readonly timestampMs: number;
  readonly workerId: number;
  readonly sequence: number;
}

/** The layout given, completed with the default's widths and checked. */
export function completeLayout(given: Partial<SnowflakeLayout> | undefined): SnowflakeLayout {
  const layout = { ...DEFAULT_LAYOUT, ...given };
  for (const [key, value] of Object.entries(layout)) {
    if (!Number.isInteger(value) || value < 1)
      throw new SnowflakeLayoutError(`layout.${key} must be a positive integer; got ${JSON.stringify(value)}`);
  }
  const total = layout.timeBits + layout.workerBits + layout.sequenceBits;
  if (total > 63)
    throw new SnowflakeLayoutError(
      `layout adds up to ${total} bits; at most 63 (timeBits ${layout.timeBits} + workerBits ${layout.workerBits} + sequenceBits ${layout.sequenceBits})`,
    );
  if (layout.timeBits > 48)
    throw new SnowflakeLayoutError(
      `layout.timeBits is at most 48 (8,900 years of milliseconds); got ${layout.timeBits}`,
    );
  return Object.freeze(layout);
}

/** Takes an ID apart by the layout and epoch. */
export function decompose(id: bigint, layout: SnowflakeLayout, epochMs: number): SnowflakeParts {
  const seqBits = BigInt(layout.sequenceBits);
  const workerBits = BigInt(layout.workerBits);
  return {
    timestampMs: Number(id >> (seqBits + workerBits)) + epochMs,
    workerId: Number((id >> seqBits) & ((1n << workerBits) - 1n)),
    sequence: Number(id & ((1n << seqBits) - 1n)),
  };
}

/** The first ID of a millisecond for a worker. */
export function firstIdOf(ms: number, workerId: number, layout: SnowflakeLayout, epochMs: number): bigint {
  const since = ms - epochMs;
  if (since < 0 || since >= 2 ** layout.timeBits)
    throw new SnowflakeLayoutError(
      `time ${new Date(ms).toISOString()} does not fit ${layout.timeBits} bits of milliseconds since the epoch ${new Date(epochMs).toISOString()}`,
    );
  return (
    (BigInt(since) << BigInt(layout.workerBits + layout.sequenceBits)) |
    (BigInt(workerId) << BigInt(layout.sequenceBits))
  );
}
