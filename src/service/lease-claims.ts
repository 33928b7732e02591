/**
 * A lease's claims: the copies of a lease written on the backends other than its owner, so that an
 * owner that forgets a lease (a restore, a promoted replica) cannot grant its worker ID twice.
 * Every write goes through the allocator's breakers.
 */
import type { Allocator, ClaimsPolicy } from '../allocator/allocator.js';
import { acceptsClaim, isLive, renewedRecord, type LeaseRecord, type PoolSettings } from '../core/worker-leases.js';
import { BackendsUnavailableError, LeaseLostError } from '../core/errors.js';

/** Writes, judges and revokes the claims of leases, under the claims policy. */
export class LeaseClaims {
  readonly #allocator: Allocator;
  readonly #policy: ClaimsPolicy;

  constructor(allocator: Allocator, policy: ClaimsPolicy) {
    this.#allocator = allocator;
    this.#policy = policy;
  }

  /** Writes the lease's claim on each of `others`, by each one's own clock. */
  async everywhere(
    pool: PoolSettings,
    others: readonly string[],
    lease: LeaseRecord,
  ): Promise<{ count: number; refusedBy: string | undefined }> {
    if (others.length === 0) return { count: 0, refusedBy: undefined };
    const answers = await this.#allocator.onWorkerStores(
      (s) =>
        s.change(pool.name, lease.workerId, (record, now) => {
          if (!acceptsClaim(record, lease.epoch, now))
            throw new LeaseLostError(
              `claim of worker ${lease.workerId} of pool ${pool.name} refused: epoch ${record.epoch} is live here`,
            );
          return {
            ...renewedRecord(pool, lease, now),
            highWaterMs: Math.max(lease.highWaterMs, record.epoch === lease.epoch ? record.highWaterMs : 0),
          };
        }),
      { only: others },
    );
    const refused = answers.find((a) => !a.ok && a.error instanceof LeaseLostError);
    return { count: answers.filter((a) => a.ok).length, refusedBy: refused?.backend };
  }

  /** Ends a lease on its owner at once, without freeing its worker ID before the reuse delay. */
  async revoke(pool: PoolSettings, owner: string, workerId: number, epoch: bigint): Promise<void> {
    await this.#allocator.onWorkerStores(
      (s) =>
        s.change(pool.name, workerId, (record, now) =>
          record.epoch === epoch && isLive(record, now) ? { ...record, expiresMs: now.nowMs } : undefined,
        ),
      { only: [owner] },
    );
  }

  /** True when `claimed` of `others` claims may stand for a lease under the claims policy (none needed without others). */
  enough(others: number, claimed: number): boolean {
    return others === 0 || claimed > 0 || this.#policy === 'preferred';
  }

  /** Throws when they may not: TICKETD_CLAIMS=required and no other backend answered. */
  need(pool: PoolSettings, others: number, answered: number): void {
    if (!this.enough(others, answered)) {
      throw new BackendsUnavailableError(
        `no other backend answered to hold the claim of a lease of pool ${pool.name}, and TICKETD_CLAIMS is required`,
      );
    }
  }
}
