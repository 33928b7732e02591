/** What the worker-pool service needs of a backend: pool rows, and lease records changed under a lock. */
import type { LeaseRecord, PoolSettings, ServerTime } from '../core/worker-leases.js';

/** Decides a worker ID's new record from its current one and the backend's clock; undefined leaves it as it is. */
export type LeaseDecision = (record: LeaseRecord, now: ServerTime) => LeaseRecord | undefined;

/** A worker ID's record as one backend holds it, with that backend's clock. */
export interface RecordRead {
  readonly record: LeaseRecord | undefined;
  readonly now: ServerTime;
}

/** Worker pools and leases on one backend. */
export interface WorkerLeaseStore {
  /** Creates the pool's row here; false when an identical one exists; throws PoolConflictError on another. */
  createPool(pool: PoolSettings): Promise<boolean>;
  /** Pool rows here (one, or all). */
  readPools(name?: string): Promise<PoolSettings[]>;
  /** Every record of a pool here, with this backend's clock. */
  readRecords(pool: string): Promise<{ readonly records: LeaseRecord[]; readonly now: ServerTime }>;
  /** One worker ID's record here. */
  readRecord(pool: string, workerId: number): Promise<RecordRead>;
  /**
   * In one transaction holding the worker ID's row lock: reads its record (epoch 0 when never
   * leased here), asks `decide`, writes what it returns. What `decide` throws rolls it back.
   */
  change(pool: string, workerId: number, decide: LeaseDecision): Promise<RecordRead>;
  /**
   * After every backend was restored: holds every worker ID of the pool for TTL + reuse delay from
   * now (this backend's clock), and puts its next holder above now + TTL + skew, past any timestamp
   * a holder from before the restore may still use. Ends every lease the backup brought back.
   */
  fencePool(pool: PoolSettings): Promise<void>;
}
