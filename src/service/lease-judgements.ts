/** The leases' refusals and choices that need no backend: pure functions of a pool and a record. */
import { poolSize, type LeaseRecord, type PoolSettings } from '../core/worker-leases.js';
import { BadRequestError, LeaseLostError } from '../core/errors.js';

/** Why a lease at `epoch` is no longer held, as the error its holder gets. */
export function leaseLost(
  pool: PoolSettings,
  workerId: number,
  epoch: bigint,
  record: LeaseRecord,
  nowMs: number,
): LeaseLostError {
  const why =
    record.epoch !== epoch
      ? record.epoch === 0n
        ? 'its owner has no record of it'
        : `its owner holds epoch ${record.epoch}`
      : record.releasedMs !== undefined
        ? 'it was released'
        : `it expired ${nowMs - record.expiresMs} ms ago`;
  return new LeaseLostError(
    `lease of worker ${workerId} of pool ${pool.name} at epoch ${epoch} is no longer held: ${why}; take a new lease`,
  );
}

/** Throws when the pool has no such worker ID. */
export function assertInPool(pool: PoolSettings, workerId: number): void {
  if (!Number.isInteger(workerId) || workerId < 0 || workerId >= poolSize(pool))
    throw new BadRequestError(
      `pool ${pool.name} has no worker ${workerId}: its worker IDs are 0 to ${poolSize(pool) - 1}`,
    );
}

/** Up to `n` of the free worker IDs, chosen at random so that front ends taking at once rarely meet. */
export function pickAtRandom(free: readonly number[], n: number, random: () => number): number[] {
  const left = [...free];
  const picked: number[] = [];
  while (picked.length < n && left.length > 0) picked.push(left.splice(Math.floor(random() * left.length), 1)[0]!);
  return picked;
}
