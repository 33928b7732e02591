/**
 * Strict sequences (docs/strict-sequences.md): one leader per sequence among the front ends, elected
 * through the backends, serves every ID. The rules here are pure; service/strict-leader.ts runs them.
 *
 * - Every backend holds the sequence's lease row: epoch, leader, expiry by its own clock, bound.
 * - A front end becomes leader of epoch E by a compare-and-set on a majority of the backends: each
 *   takes E only above its own epoch and only when its lease has expired (or is the candidate's
 *   own). The row's bound as it stood under that lock is returned; the leader starts above the
 *   highest of them. A bound that was ever written to a majority was written to one of these
 *   backends before it took E (after, the epoch fence refuses it), so the leader starts above it.
 * - The leader serves only below a bound it has written to a majority (fenced by epoch and leader),
 *   and only until its lease may have expired on any backend: it counts from before it sent the
 *   write that granted or renewed the lease, less a margin for clock drift.
 * - An ex-leader's writes meet another epoch and change nothing: it never writes a bound back.
 */

/** How long a lease lasts on a backend (by its clock) from the write that grants or renews it. */
export const STRICT_LEASE_MS = 2000;
/** How early a leader stops serving before its lease could end (clock rate and steps between hosts). */
export const STRICT_MARGIN_MS = 500;
/** How often a leader renews its lease. */
export const STRICT_RENEW_EVERY_MS = 400;
/** How long a request waits for a leader (election, forwarding, not-leader retries) before a 503. */
export const STRICT_WAIT_MS = 3000;
/** The smallest and largest step by which a leader moves its bound ahead. */
export const MIN_STRICT_STEP = 1000n;
export const MAX_STRICT_STEP = 1_000_000n;

/** A sequence's lease row as one backend holds it, with that backend's clock. */
export interface StrictRow {
  readonly epoch: bigint;
  /** The leader's instance ID ('' when none ever led). */
  readonly leader: string;
  /** Where followers send requests to the leader. */
  readonly leaderUrl: string;
  readonly expiresMs: number;
  /** No ID above startAfter and at or below it may be served by a leader that starts later. */
  readonly bound: bigint;
  /** The backend's clock when it read the row. */
  readonly nowMs: number;
}

/** Who leads, as one backend's row says. */
export interface LeaderSeen {
  readonly epoch: bigint;
  readonly leader: string;
  readonly leaderUrl: string;
}

/** How many of `backends` make a majority. */
export function majority(backends: number): number {
  return Math.floor(backends / 2) + 1;
}

/** The live leader the rows name (highest epoch among unexpired rows), if any. */
export function liveLeader(rows: readonly StrictRow[]): LeaderSeen | undefined {
  let best: StrictRow | undefined;
  for (const row of rows) {
    if (row.leader === '' || row.expiresMs <= row.nowMs) continue;
    if (best === undefined || row.epoch > best.epoch) best = row;
  }
  return best === undefined ? undefined : { epoch: best.epoch, leader: best.leader, leaderUrl: best.leaderUrl };
}

/** The epoch a candidate asks for: above every epoch it read. */
export function nextEpoch(rows: readonly StrictRow[]): bigint {
  return rows.reduce((high, r) => (r.epoch > high ? r.epoch : high), 0n) + 1n;
}

/**
 * Whether a backend's row lets a candidate take `epoch` (judged under the row's lock, with the
 * backend's clock): above the row's epoch, and the lease expired or the candidate's own.
 */
export function mayTake(row: StrictRow, epoch: bigint, candidate: string): boolean {
  return epoch > row.epoch && (row.expiresMs <= row.nowMs || row.leader === candidate);
}

/** Where a new leader starts: above every bound of the majority that granted its epoch. */
export function startAbove(bounds: readonly bigint[], startAfter: bigint): bigint {
  return bounds.reduce((high, b) => (b > high ? b : high), startAfter);
}

/**
 * The next step for the bound: doubled when the last one lasted under a second, halved when it
 * lasted over ten, so a bound write is about one a second under load, and a crash leaves a gap of
 * about a second of traffic.
 */
export function nextStep(step: bigint, lastedMs: number): bigint {
  if (lastedMs < 1000) return step * 2n > MAX_STRICT_STEP ? MAX_STRICT_STEP : step * 2n;
  if (lastedMs > 10_000) return step / 2n < MIN_STRICT_STEP ? MIN_STRICT_STEP : step / 2n;
  return step;
}

/** Until when (this process's monotonic clock) a lease granted or renewed by a write sent at `sentMono` may be used. */
export function servesUntil(sentMono: number): number {
  return sentMono + STRICT_LEASE_MS - STRICT_MARGIN_MS;
}
