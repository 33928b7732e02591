/**
 * Why two live leases never hold one Snowflake worker ID, and why no two holders of one ever mint
 * the same timestamp (README, "Snowflake worker IDs"; docs/uniqueness.md, "Worker IDs"):
 *
 * 1. One grantor per worker ID: worker w is granted only by the backend whose auto_increment_offset
 *    is `owners[w mod owners.length]`, fixed when the pool is created. That backend serialises every
 *    take, renewal and release of w in a locked transaction, judged by its own clock (NOW(6)).
 * 2. Every other backend holds a claim of each lease (the same row, by its own clock). A take reads
 *    the claims first and refuses w while any of them is live, so an owner restored from a backup,
 *    or a lagging replica promoted behind its address, which forgot a live lease, grants nothing.
 * 3. A worker ID is free only when released, or when its lease expired and the reuse delay
 *    (≥ TTL + the largest clock skew a holder may have) passed after that.
 * 4. Each lease carries the high-water timestamp: the latest millisecond any earlier holder of the
 *    worker ID may have used (its last one when it released; its expiry plus the skew bound when it
 *    did not). Holders issue only above it, so even two leases that overlapped in real time (a
 *    double fault) would not mint one ID twice as long as clocks stay within the skew bound.
 * 5. Epochs grow per worker ID: above every epoch any backend recorded for it, and above the owner's
 *    clock in microseconds, so a restore that forgot the records still does not hand an epoch out again.
 *
 * Everything here is pure; src/backend/mysql/worker-sql.ts does the I/O, src/service/worker-leases.ts
 * the sequence of steps.
 */
import { BadRequestError } from './errors.js';
import { SEQUENCE_NAME_PATTERN } from './sequence.js';

/** Worker-ID width when a pool is created without one: 0–1023, as Twitter's layout. */
export const DEFAULT_WORKER_BITS = 10;
/** Widest worker ID a pool may have (Sonyflake uses 16 bits). */
export const MAX_WORKER_BITS = 16;
/** Lease time-to-live when none is given. */
export const DEFAULT_LEASE_TTL_MS = 30_000;
export const MIN_LEASE_TTL_MS = 1_000;
export const MAX_LEASE_TTL_MS = 600_000;
/** The largest difference between a holder's clock and the server's that holders tolerate. */
export const DEFAULT_MAX_SKEW_MS = 1_000;
export const MAX_SKEW_LIMIT_MS = 60_000;

/** A pool's settings: the same row on every backend, fixed at creation. */
export interface PoolSettings {
  readonly name: string;
  readonly workerBits: number;
  readonly ttlMs: number;
  /** Holders stop issuing past this skew from the server's clock; high-water marks add it. */
  readonly maxSkewMs: number;
  /** After a lease expired unreleased, this long passes before its worker ID is granted again. */
  readonly reuseDelayMs: number;
  /** auto_increment_offsets of the granting backends: worker w belongs to owners[w mod length]. */
  readonly owners: readonly bigint[];
}

/** One backend's record of a worker ID (a lease on its owner, a claim elsewhere); times by that backend's clock. */
export interface LeaseRecord {
  readonly workerId: number;
  /** 0: never leased here. */
  readonly epoch: bigint;
  readonly holder: string;
  /** What this lease's holder was given: it issued nothing at or below it. */
  readonly highWaterMs: number;
  readonly expiresMs: number;
  readonly freeMs: number;
  readonly releasedMs: number | undefined;
  readonly lastUsedMs: number | undefined;
}

/** The backend's clock, read in the same statement as the records. */
export interface ServerTime {
  readonly nowMs: number;
  readonly nowUs: bigint;
}

/** A lease as its holder gets it. */
export interface Lease {
  readonly pool: string;
  readonly workerId: number;
  readonly epoch: bigint;
  readonly holder: string;
  readonly expiresMs: number;
  /** The owner's clock when it granted or renewed the lease: the TTL runs from here. */
  readonly grantedMs: number;
  /** The owner's clock as of the answer (later than grantedMs by what the claims took): for skew. */
  readonly serverMs: number;
  readonly highWaterMs: number;
}

/** Number of worker IDs in the pool. */
export function poolSize(pool: PoolSettings): number {
  return 2 ** pool.workerBits;
}

/** The offset of the backend that grants worker w. */
export function ownerOf(pool: PoolSettings, workerId: number): bigint {
  return pool.owners[workerId % pool.owners.length]!;
}

/** The worker IDs a backend (by offset) grants, in order. */
export function workersOwnedBy(pool: PoolSettings, offset: bigint): number[] {
  const index = pool.owners.indexOf(offset);
  if (index < 0) return [];
  const ids: number[] = [];
  for (let w = index; w < poolSize(pool); w += pool.owners.length) ids.push(w);
  return ids;
}

/** True when the record lets its worker ID be granted now (by the same backend's clock). */
export function isFree(record: LeaseRecord | undefined, now: ServerTime): boolean {
  return record === undefined || record.freeMs <= now.nowMs;
}

/** True while the record's lease may still be used by its holder (not released, not expired). */
export function isLive(record: LeaseRecord, now: ServerTime): boolean {
  return record.epoch > 0n && record.releasedMs === undefined && record.expiresMs > now.nowMs;
}

/**
 * The latest millisecond any holder up to this record may have used: what it released with, or
 * (unreleased) its expiry plus the skew bound, since a holder stops at its expiry and its clock is
 * within the bound of the server's.
 */
export function highWaterAfter(record: LeaseRecord | undefined, pool: PoolSettings): number {
  if (record === undefined || record.epoch === 0n) return record?.highWaterMs ?? 0;
  const used =
    record.releasedMs !== undefined && record.lastUsedMs !== undefined
      ? record.lastUsedMs
      : record.expiresMs + pool.maxSkewMs;
  return Math.max(record.highWaterMs, used);
}

/** What the claims on the other backends say about granting a worker ID. */
export type ClaimsVerdict =
  | { readonly free: true; readonly highWaterMs: number; readonly epochAbove: bigint }
  | { readonly free: false; readonly reason: string };

/**
 * Judges a worker ID by the claims other backends hold (each with its own clock). Any claim not yet
 * free refuses it: its owner may have forgotten a live lease (a restore, a promoted replica).
 */
export function judgeClaims(
  pool: PoolSettings,
  workerId: number,
  claims: readonly { readonly backend: string; readonly record: LeaseRecord | undefined; readonly now: ServerTime }[],
): ClaimsVerdict {
  let highWaterMs = 0;
  let epochAbove = 0n;
  for (const c of claims) {
    if (!isFree(c.record, c.now)) {
      return {
        free: false,
        reason: `backend ${c.backend} holds a claim of worker ${workerId} of pool ${pool.name} (epoch ${c.record!.epoch}) until ${new Date(c.record!.freeMs).toISOString()}`,
      };
    }
    highWaterMs = Math.max(highWaterMs, highWaterAfter(c.record, pool));
    if (c.record !== undefined && c.record.epoch > epochAbove) epochAbove = c.record.epoch;
  }
  return { free: true, highWaterMs, epochAbove };
}

/** The epoch of a new lease: above every epoch recorded for the worker ID, and above the owner's clock in µs. */
export function nextLeaseEpoch(recorded: bigint, now: ServerTime): bigint {
  return recorded + 1n > now.nowUs ? recorded + 1n : now.nowUs;
}

/** The owner's record of a new lease. */
export function grantRecord(
  pool: PoolSettings,
  workerId: number,
  holder: string,
  epoch: bigint,
  highWaterMs: number,
  now: ServerTime,
): LeaseRecord {
  const expiresMs = now.nowMs + pool.ttlMs;
  return {
    workerId,
    epoch,
    holder,
    highWaterMs,
    expiresMs,
    freeMs: expiresMs + pool.reuseDelayMs,
    releasedMs: undefined,
    lastUsedMs: undefined,
  };
}

/** The same record, renewed at `now`. */
export function renewedRecord(pool: PoolSettings, record: LeaseRecord, now: ServerTime): LeaseRecord {
  const expiresMs = now.nowMs + pool.ttlMs;
  return { ...record, expiresMs, freeMs: expiresMs + pool.reuseDelayMs };
}

/** The same record, released at `now` with the holder's last used millisecond. */
export function releasedRecord(record: LeaseRecord, lastUsedMs: number, now: ServerTime): LeaseRecord {
  return {
    ...record,
    expiresMs: Math.min(record.expiresMs, now.nowMs),
    freeMs: now.nowMs,
    releasedMs: now.nowMs,
    lastUsedMs: Math.max(lastUsedMs, record.highWaterMs),
  };
}

/**
 * What a backend other than the owner does with a lease's claim: take it when its record of the
 * worker ID is free or already names this epoch; refuse it when it holds another live one.
 */
export function acceptsClaim(record: LeaseRecord | undefined, epoch: bigint, now: ServerTime): boolean {
  return isFree(record, now) || record!.epoch === epoch;
}

/** Pool names follow the pattern of sequence names. */
export function assertPoolName(name: string): void {
  if (!SEQUENCE_NAME_PATTERN.test(name))
    throw new BadRequestError(
      `pool name ${JSON.stringify(name.slice(0, 80))} does not match ${SEQUENCE_NAME_PATTERN.source}`,
    );
}

/** Validates a pool's settings from a PUT body; reports every problem at once. */
export function parsePoolSettings(name: string, body: unknown, owners: readonly bigint[]): PoolSettings {
  assertPoolName(name);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new BadRequestError('body must be a JSON object such as {"workerBits":10,"ttlMs":30000}');
  const b = body as Record<string, unknown>;
  const problems: string[] = [];
  const known = new Set(['workerBits', 'ttlMs', 'maxSkewMs', 'reuseDelayMs']);
  for (const key of Object.keys(b))
    if (!known.has(key)) problems.push(`unknown field ${JSON.stringify(key)} (known: ${[...known].join(', ')})`);
  const int = (key: string, fallback: number, min: number, max: number): number => {
    const v = b[key] ?? fallback;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      problems.push(`${key} must be an integer from ${min} to ${max}; got ${JSON.stringify(v)}`);
      return fallback;
    }
    return v;
  };
  const workerBits = int('workerBits', DEFAULT_WORKER_BITS, 1, MAX_WORKER_BITS);
  const before = problems.length;
  const ttlMs = int('ttlMs', DEFAULT_LEASE_TTL_MS, MIN_LEASE_TTL_MS, MAX_LEASE_TTL_MS);
  const maxSkewMs = int('maxSkewMs', DEFAULT_MAX_SKEW_MS, 0, MAX_SKEW_LIMIT_MS);
  const leastDelay = ttlMs + maxSkewMs;
  const reuseDelayMs = int('reuseDelayMs', leastDelay, 0, MAX_LEASE_TTL_MS * 10);
  // Judged only against a valid TTL and skew: a bound built from a fallback would mislead.
  if (problems.length === before && reuseDelayMs < leastDelay)
    problems.push(`reuseDelayMs must be at least ttlMs + maxSkewMs = ${leastDelay}; got ${reuseDelayMs}`);
  if (problems.length > 0) throw new BadRequestError(`pool ${name}: ${problems.join('; ')}`);
  return Object.freeze({ name, workerBits, ttlMs, maxSkewMs, reuseDelayMs, owners: Object.freeze([...owners]) });
}

/** True when two backends' rows of a pool say the same. */
export function samePool(a: PoolSettings, b: PoolSettings): boolean {
  return (
    a.name === b.name &&
    a.workerBits === b.workerBits &&
    a.ttlMs === b.ttlMs &&
    a.maxSkewMs === b.maxSkewMs &&
    a.reuseDelayMs === b.reuseDelayMs &&
    a.owners.length === b.owners.length &&
    a.owners.every((o, i) => o === b.owners[i])
  );
}

/** A pool as JSON (numbers are small; owners as decimal strings of offsets). */
export function poolToJson(pool: PoolSettings): Record<string, unknown> {
  return {
    name: pool.name,
    workerBits: pool.workerBits,
    size: poolSize(pool),
    ttlMs: pool.ttlMs,
    maxSkewMs: pool.maxSkewMs,
    reuseDelayMs: pool.reuseDelayMs,
    owners: pool.owners.map(String),
  };
}
