/**
 * When a Snowflake pool's time field runs out. The epoch and the layout are the holders' options
 * (the clients' `epoch` and `layout`): ticketd never sees them, so the operator tells it what the
 * holders use (TICKETD_SNOWFLAKE_EPOCH, TICKETD_SNOWFLAKE_TIME_BITS), and without that it assumes
 * the clients' defaults. A holder's time field counts milliseconds since the epoch in `timeBits`
 * bits: its last usable millisecond is epoch + 2^timeBits − 1, after which the clients refuse to mint.
 */

/** The clients' default epoch, 2024-01-01T00:00:00Z (packages/client's DEFAULT_SNOWFLAKE_EPOCH_MS). */
export const DEFAULT_SNOWFLAKE_EPOCH_MS = Date.UTC(2024, 0, 1);
/** The clients' default layout: 41 time bits, 10 worker bits, 12 sequence bits (63 in all). */
export const DEFAULT_TIME_BITS = 41;
export const DEFAULT_LAYOUT_WORKER_BITS = 10;
export const DEFAULT_SEQUENCE_BITS = 12;
/** Bits of a Snowflake ID (a signed 64-bit integer's non-negative range). */
export const SNOWFLAKE_ID_BITS = 63;
/** The clients refuse a wider time field (8,900 years of milliseconds). */
export const MAX_TIME_BITS = 48;

/** What ticketd assumes the holders mint with; timeBits undefined: inferred per pool (timeBitsFor). */
export interface AssumedLayout {
  readonly epochMs: number;
  readonly timeBits: number | undefined;
}

/** A pool's time field: its width, and when it runs out. */
export interface TimeField {
  readonly timeBits: number;
  readonly epochMs: number;
  /** The first millisecond the field cannot hold. */
  readonly endsMs: number;
  /** Seconds from `now` until then; 0 once past. */
  readonly secondsLeft: number;
}

/**
 * The time bits the holders of a pool use: the operator's, or else the clients' default layout,
 * which holds up to 10 worker bits; a wider pool's holders must give the worker field more bits, and
 * keeping the 12 sequence bits those come out of the time field (16 worker bits: 35 time bits, 1.1 years).
 */
export function timeBitsFor(workerBits: number, given: number | undefined): number {
  if (given !== undefined) return given;
  return workerBits <= DEFAULT_LAYOUT_WORKER_BITS
    ? DEFAULT_TIME_BITS
    : SNOWFLAKE_ID_BITS - DEFAULT_SEQUENCE_BITS - workerBits;
}

/** When the time field of a pool of `workerBits` runs out, seen at `nowMs`. */
export function timeField(workerBits: number, layout: AssumedLayout, nowMs: number): TimeField {
  const timeBits = timeBitsFor(workerBits, layout.timeBits);
  const endsMs = layout.epochMs + 2 ** timeBits;
  return { timeBits, epochMs: layout.epochMs, endsMs, secondsLeft: Math.max(0, Math.floor((endsMs - nowMs) / 1000)) };
}
