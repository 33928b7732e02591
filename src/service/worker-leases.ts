/**
 * Leases of Snowflake worker IDs: taking, renewing and releasing them on the backends, in the steps
 * core/worker-leases.ts argues for. Every call to a backend goes through the allocator's breakers.
 */
import { failureOf, type Allocator, type Answer, type ClaimsPolicy } from '../allocator/allocator.js';
import type { Random } from '../core/clock.js';
import type { RecordRead } from '../backend/worker-lease-store.js';
import {
  grantRecord,
  highWaterAfter,
  isFree,
  isLive,
  judgeClaims,
  nextLeaseEpoch,
  poolSize,
  releasedRecord,
  renewedRecord,
  workersOwnedBy,
  type Lease,
  type LeaseRecord,
  type PoolSettings,
} from '../core/worker-leases.js';
import { BackendsUnavailableError, LeaseLostError, PoolExhaustedError } from '../core/errors.js';
import type { Logger } from '../logger.js';
import { EpisodeLog } from '../util/episode-log.js';
import { errorText } from '../util/error-text.js';
import type { WorkerPools } from './worker-pools.js';
import { NO_WORKER_EVENTS, type WorkerEvents } from './worker-events.js';
import { LeaseClaims } from './lease-claims.js';
import { assertInPool, leaseLost, pickAtRandom } from './lease-judgements.js';

export type { WorkerEvents } from './worker-events.js';

/** Candidates tried per owner in one take before moving on (each costs a claim read). */
const CANDIDATES_PER_OWNER = 4;

/** Dependencies of the leases. */
export interface WorkerLeasesOptions {
  readonly allocator: Allocator;
  readonly pools: WorkerPools;
  readonly logger: Logger;
  /** When no other backend can hold a lease's claim: grant on the owner alone (`preferred`) or refuse. */
  readonly claimsPolicy?: ClaimsPolicy;
  readonly events?: WorkerEvents;
  readonly random?: Random;
  /** This process's monotonic clock in ms (injected in tests). */
  readonly monotonicMs?: () => number;
}

/** What the HTTP layer holds of Snowflake worker IDs: the pools, and their leases. */
export interface Workers {
  readonly pools: WorkerPools;
  readonly leases: WorkerLeases;
}

/** Takes, renews and releases leases of the pools' worker IDs. */
export class WorkerLeases {
  readonly #allocator: Allocator;
  readonly #pools: WorkerPools;
  readonly #claims: LeaseClaims;
  readonly #events: WorkerEvents;
  readonly #random: Random;
  readonly #monotonicMs: () => number;
  /** Worker IDs refused by a claim, one per take while an owner has forgotten leases: one line per episode. */
  readonly #episodes: EpisodeLog;

  constructor(options: WorkerLeasesOptions) {
    this.#allocator = options.allocator;
    this.#pools = options.pools;
    this.#claims = new LeaseClaims(options.allocator, options.claimsPolicy ?? 'preferred');
    this.#events = options.events ?? NO_WORKER_EVENTS;
    this.#random = options.random ?? Math.random;
    this.#monotonicMs = options.monotonicMs ?? (() => performance.now());
    this.#episodes = new EpisodeLog(options.logger);
  }

  /** Takes a free worker ID of the pool for `holder`. */
  async take(name: string, holder: string): Promise<Lease> {
    const pool = await this.#pools.pool(name);
    const owners = await this.#pools.owners(pool);
    const unreachable: string[] = [];
    let soonestFreeMs = Number.POSITIVE_INFINITY;
    const start = Math.floor(this.#random() * owners.length);
    for (let i = 0; i < owners.length; i++) {
      const owner = owners[(start + i) % owners.length]!;
      if (owner.label === undefined) {
        unreachable.push(`offset ${owner.offset} (no configured backend has answered with it)`);
        continue;
      }
      const [read] = await this.#allocator.onWorkerStores((s) => s.readRecords(name), { only: [owner.label] });
      if (read === undefined || !read.ok) {
        unreachable.push(`${owner.label}: ${read === undefined ? 'not configured' : errorText(read.error)}`);
        continue;
      }
      const records = new Map(read.value.records.map((r) => [r.workerId, r]));
      const free = workersOwnedBy(pool, owner.offset).filter((w) => isFree(records.get(w), read.value.now));
      for (const r of read.value.records)
        if (!isFree(r, read.value.now)) soonestFreeMs = Math.min(soonestFreeMs, r.freeMs - read.value.now.nowMs);
      for (const workerId of pickAtRandom(free, CANDIDATES_PER_OWNER, this.#random)) {
        const lease = await this.#tryTake(pool, owner.label, workerId, holder);
        if (lease === 'owner-failed') {
          unreachable.push(`${owner.label}: did not answer`);
          break;
        }
        if (lease !== undefined) {
          this.#events.taken(name);
          return lease;
        }
      }
    }
    if (unreachable.length > 0) {
      throw new BackendsUnavailableError(
        `no worker ID of pool ${name} could be leased; the owners of some did not answer: ${unreachable.join('; ')}`,
      );
    }
    this.#events.refused(name, 'exhausted');
    const retryAfterSeconds = Math.max(
      1,
      Math.min(3600, Math.ceil((Number.isFinite(soonestFreeMs) ? soonestFreeMs : pool.ttlMs) / 1000)),
    );
    throw new PoolExhaustedError(
      `every worker ID of pool ${name} (${poolSize(pool)}) is leased, cooling down or claimed; one frees up in about ${retryAfterSeconds} s, or create a pool with more workerBits`,
      { retryAfterSeconds },
    );
  }

  /**
   * One worker ID: read the other backends' claims, grant on the owner under its row lock, then
   * claim on the others. Undefined when the worker ID turned out to be held.
   */
  async #tryTake(
    pool: PoolSettings,
    owner: string,
    workerId: number,
    holder: string,
  ): Promise<Lease | undefined | 'owner-failed'> {
    const others = this.#pools.others(owner);
    const claims = await this.#allocator.onWorkerStores((s) => s.readRecord(pool.name, workerId), { only: others });
    const answered = claims.flatMap((a) => (a.ok ? [{ backend: a.backend, ...a.value }] : []));
    this.#claims.need(pool, others.length, answered.length);
    const verdict = judgeClaims(pool, workerId, answered);
    if (!verdict.free) {
      // The owner called it free: it may have forgotten a lease (a restore, a promoted replica).
      this.#episodes.note(
        `claimed ${pool.name} ${owner}`,
        { pool: pool.name, owner, first: verdict.reason },
        `worker IDs of pool ${pool.name} that owner ${owner} called free are held by a claim on another backend (a restore or a promoted replica?)`,
      );
      this.#events.refused(pool.name, 'claimed');
      return undefined;
    }
    let granted: LeaseRecord | undefined;
    let readAt = 0;
    const [answer] = await this.#allocator.onWorkerStores(
      (s) =>
        s.change(pool.name, workerId, (record, now) => {
          // Decided afresh on every attempt: a deadlock retries the transaction.
          granted = undefined;
          readAt = this.#monotonicMs();
          if (!isFree(record, now)) return undefined;
          const epoch = nextLeaseEpoch(record.epoch > verdict.epochAbove ? record.epoch : verdict.epochAbove, now);
          granted = grantRecord(
            pool,
            workerId,
            holder,
            epoch,
            Math.max(highWaterAfter(record, pool), verdict.highWaterMs),
            now,
          );
          return granted;
        }),
      { only: [owner] },
    );
    if (answer === undefined || !answer.ok) return 'owner-failed';
    const lease = granted;
    if (lease === undefined) return undefined;
    const claimed = await this.#claims.everywhere(pool, others, lease);
    if (claimed.refusedBy !== undefined || !this.#claims.enough(others.length, claimed.count)) {
      await this.#claims.revoke(pool, owner, workerId, lease.epoch);
      if (claimed.refusedBy !== undefined) {
        this.#events.refused(pool.name, 'claimed');
        return undefined;
      }
      this.#claims.need(pool, others.length, claimed.count);
    }
    if (claimed.count < others.length) this.#events.unclaimed(pool.name);
    return {
      pool: pool.name,
      workerId,
      epoch: lease.epoch,
      holder,
      expiresMs: lease.expiresMs,
      grantedMs: answer.value.now.nowMs,
      serverMs: this.#clockNow(answer.value.now.nowMs, readAt),
      highWaterMs: lease.highWaterMs,
    };
  }

  /** Extends a lease from now; the holder reports the clock skew it measured at its last renewal. */
  async renew(name: string, workerId: number, epoch: bigint, skewMs: number | undefined): Promise<Lease> {
    const pool = await this.#pools.pool(name);
    assertInPool(pool, workerId);
    if (skewMs !== undefined) this.#events.skew(name, skewMs);
    const owner = await this.#pools.ownerLabel(pool, workerId);
    let readAt = 0;
    const [answer] = await this.#allocator.onWorkerStores(
      (s) =>
        s.change(name, workerId, (record, now) => {
          readAt = this.#monotonicMs();
          if (record.epoch !== epoch || !isLive(record, now)) throw leaseLost(pool, workerId, epoch, record, now.nowMs);
          return renewedRecord(pool, record, now);
        }),
      { only: [owner] },
    );
    const renewed = this.#answerOf(answer, owner, name);
    const others = this.#pools.others(owner);
    const claimed = await this.#claims.everywhere(pool, others, renewed.record!);
    if (claimed.refusedBy !== undefined) {
      // Another backend holds a live claim of another epoch: one of the two leases was granted by an
      // owner that had forgotten the other. Neither may go on; this one stops here.
      await this.#claims.revoke(pool, owner, workerId, epoch);
      this.#events.refused(name, 'lost');
      throw new LeaseLostError(
        `worker ${workerId} of pool ${name}: backend ${claimed.refusedBy} holds a live claim of another lease of it; take a new lease`,
      );
    }
    this.#claims.need(pool, others.length, claimed.count);
    if (claimed.count < others.length) this.#events.unclaimed(name);
    this.#events.renewed(name);
    const r = renewed.record!;
    return {
      pool: name,
      workerId,
      epoch,
      holder: r.holder,
      expiresMs: r.expiresMs,
      grantedMs: renewed.now.nowMs,
      serverMs: this.#clockNow(renewed.now.nowMs, readAt),
      highWaterMs: r.highWaterMs,
    };
  }

  /** Ends a lease: the holder issued nothing after `lastUsedMs`, so the worker ID is free from now, above it. */
  async release(name: string, workerId: number, epoch: bigint, lastUsedMs: number): Promise<void> {
    const pool = await this.#pools.pool(name);
    assertInPool(pool, workerId);
    const owner = await this.#pools.ownerLabel(pool, workerId);
    const [answer] = await this.#allocator.onWorkerStores(
      (s) =>
        s.change(name, workerId, (record, now) => {
          if (record.epoch !== epoch) throw leaseLost(pool, workerId, epoch, record, now.nowMs);
          return record.releasedMs === undefined ? releasedRecord(record, lastUsedMs, now) : undefined;
        }),
      { only: [owner] },
    );
    this.#answerOf(answer, owner, name);
    // The claims follow where they can; one that misses the release only frees the worker ID later.
    await this.#allocator.onWorkerStores(
      (s) =>
        s.change(name, workerId, (record, now) =>
          record.epoch === epoch && record.releasedMs === undefined
            ? releasedRecord(record, lastUsedMs, now)
            : undefined,
        ),
      { only: this.#pools.others(owner) },
    );
    this.#events.released(name);
  }

  /**
   * The owner's clock as of this answer: its reading plus the time spent here since that reading
   * arrived (`readAt`, taken as the locked row came back). The commit and the claims written after
   * the reading can take seconds (a peer that hangs), and a holder that held that stale reading
   * against its own clock saw a skew that was not there.
   */
  #clockNow(ownerMs: number, readAt: number): number {
    return ownerMs + Math.floor(this.#monotonicMs() - readAt);
  }

  #answerOf(answer: Answer<RecordRead> | undefined, owner: string, name: string): RecordRead {
    if (answer === undefined)
      throw new BackendsUnavailableError(`owner ${owner} of pool ${name} is not configured here`);
    if (!answer.ok) {
      if (answer.error instanceof LeaseLostError) this.#events.refused(name, 'lost');
      // ticketd's own refusals as they are; a server that failed under the call (killed, timed out) is a 503 to retry.
      throw failureOf(answer);
    }
    return answer.value;
  }
}
