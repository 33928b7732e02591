/** Worker pools and lease records on MySQL (core/worker-leases.ts says what they mean). */
import type { RowDataPacket } from 'mysql2/promise';
import type { LeaseRecord, PoolSettings, ServerTime } from '../../core/worker-leases.js';
import { samePool } from '../../core/worker-leases.js';
import { PoolConflictError, SchemaOutdatedError } from '../../core/errors.js';
import type { LeaseDecision, RecordRead, WorkerLeaseStore } from '../worker-lease-store.js';
import { isDeadlock, isNoSuchTable } from './errors.js';
import type { Connection, Db } from './pool.js';

/** The backend's clock, in the statement that reads the records: the only clock that judges a lease. */
const SERVER_TIME = 'CAST(FLOOR(UNIX_TIMESTAMP(NOW(6)) * 1000000) AS UNSIGNED) AS now_us';
// SYSDATE is read when the row is produced, after its lock is granted; NOW would be the statement's
// start, before a wait on a lock that a cut-off front end held, and a holder would see that wait as
// its own clock ahead of the owner's.
const LOCKED_TIME = 'CAST(FLOOR(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000) AS UNSIGNED) AS now_us';
const COLUMNS = 'worker_id, epoch, holder, high_water_ms, expires_ms, free_ms, released_ms, last_used_ms';
/** Worker IDs fenced per statement. */
const FENCE_ROWS_PER_STATEMENT = 1000;
/** Locked changes retried on a deadlock (two front ends taking one worker ID at once). */
const DEADLOCK_RETRIES = 4;

/** The store of one backend. */
export class WorkerSql implements WorkerLeaseStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async createPool(pool: PoolSettings): Promise<boolean> {
    const inserted = await this.#outdatedIfMissing(() =>
      this.#db.withAdminConnection(async (conn) => {
        const [result] = await conn.query<RowDataPacket[]>({
          sql: 'INSERT IGNORE INTO ticketd_worker_pools (name, worker_bits, ttl_ms, max_skew_ms, reuse_delay_ms, owners) VALUES (?, ?, ?, ?, ?, ?)',
          values: [pool.name, pool.workerBits, pool.ttlMs, pool.maxSkewMs, pool.reuseDelayMs, pool.owners.join(',')],
          timeout: this.#db.options.queryTimeoutMs,
        });
        return (result as unknown as { affectedRows: number }).affectedRows === 1;
      }),
    );
    if (inserted) return true;
    const [held] = await this.readPools(pool.name);
    if (held !== undefined && !samePool(held, pool)) {
      throw new PoolConflictError(
        `backend ${this.#db.label} has pool ${pool.name} with other settings (workerBits ${held.workerBits}, ttlMs ${held.ttlMs}, maxSkewMs ${held.maxSkewMs}, reuseDelayMs ${held.reuseDelayMs}, owners ${held.owners.join(',')})`,
      );
    }
    return false;
  }

  readPools(name?: string): Promise<PoolSettings[]> {
    return this.#outdatedIfMissing(async () => {
      const [rows] = await this.#db.withConnection((conn) =>
        conn.query<RowDataPacket[]>({
          sql: `SELECT name, worker_bits, ttl_ms, max_skew_ms, reuse_delay_ms, owners FROM ticketd_worker_pools${name === undefined ? '' : ' WHERE name = ?'} ORDER BY name`,
          values: name === undefined ? [] : [name],
          timeout: this.#db.options.queryTimeoutMs,
        }),
      );
      return rows.map((r) =>
        Object.freeze({
          name: String(r.name),
          workerBits: Number(r.worker_bits),
          ttlMs: Number(r.ttl_ms),
          maxSkewMs: Number(r.max_skew_ms),
          reuseDelayMs: Number(r.reuse_delay_ms),
          owners: Object.freeze(
            String(r.owners)
              .split(',')
              .map((o) => BigInt(o)),
          ),
        }),
      );
    });
  }

  readRecords(pool: string): Promise<{ records: LeaseRecord[]; now: ServerTime }> {
    return this.#readWithClock('', [pool], this.#db.options.queryTimeoutMs);
  }

  async readRecord(pool: string, workerId: number): Promise<RecordRead> {
    const { records, now } = await this.#readWithClock(
      ' AND worker_id = ?',
      [pool, workerId],
      this.#db.options.claimTimeoutMs,
    );
    return { record: records[0], now };
  }

  /** A pool's records (those `filter` admits) and this backend's clock, in one round trip. */
  #readWithClock(
    filter: string,
    values: (string | number)[],
    timeout: number,
  ): Promise<{ records: LeaseRecord[]; now: ServerTime }> {
    return this.#outdatedIfMissing(async () => {
      const [results] = await this.#db.withConnection((conn) =>
        conn.query<RowDataPacket[][]>({
          sql: `SELECT ${COLUMNS} FROM ticketd_worker_leases WHERE pool = ?${filter} ORDER BY worker_id; SELECT ${SERVER_TIME}`,
          values,
          timeout,
        }),
      );
      return { records: (results[0] ?? []).map(toRecord), now: toTime(results[1]?.[0]) };
    });
  }

  async change(pool: string, workerId: number, decide: LeaseDecision): Promise<RecordRead> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#outdatedIfMissing(() =>
          this.#db.withConnection((conn) => this.#changeOnce(conn, pool, workerId, decide)),
        );
      } catch (error) {
        if (!isDeadlock(error) || attempt >= DEADLOCK_RETRIES) throw error;
      }
    }
  }

  async #changeOnce(conn: Connection, pool: string, workerId: number, decide: LeaseDecision): Promise<RecordRead> {
    const timeout = this.#db.options.claimTimeoutMs;
    // The row exists before the transaction locks it: locking a missing row takes a gap lock, and
    // two front ends inserting into one gap deadlock. Committed on its own, it holds no lock after.
    await conn.query({
      sql: "INSERT IGNORE INTO ticketd_worker_leases (pool, worker_id, epoch, holder, high_water_ms, expires_ms, free_ms) VALUES (?, ?, 0, '', 0, 0, 0)",
      values: [pool, workerId],
      timeout,
    });
    await conn.query({ sql: 'START TRANSACTION', timeout });
    try {
      const [rows] = await conn.query<RowDataPacket[]>({
        sql: `SELECT ${COLUMNS}, ${LOCKED_TIME} FROM ticketd_worker_leases WHERE pool = ? AND worker_id = ? FOR UPDATE`,
        values: [pool, workerId],
        timeout,
      });
      const row = rows[0];
      if (row === undefined)
        throw new Error(
          `backend ${this.#db.label} lost the row of worker ${workerId} of pool ${pool} inside its transaction`,
        );
      const now = toTime(row);
      const current = toRecord(row);
      const next = decide(current, now);
      if (next !== undefined) {
        await conn.query({
          sql: `REPLACE INTO ticketd_worker_leases (pool, ${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          values: [
            pool,
            workerId,
            String(next.epoch),
            next.holder,
            next.highWaterMs,
            next.expiresMs,
            next.freeMs,
            next.releasedMs ?? null,
            next.lastUsedMs ?? null,
          ],
          timeout,
        });
      }
      await conn.query({ sql: 'COMMIT', timeout });
      return { record: next ?? current, now };
    } catch (error) {
      await conn.query({ sql: 'ROLLBACK', timeout }).catch(() => undefined);
      throw error;
    }
  }

  async fencePool(pool: PoolSettings): Promise<void> {
    const size = 2 ** pool.workerBits;
    await this.#outdatedIfMissing(() =>
      this.#db.withAdminConnection(async (conn) => {
        // Two statements: within one SET, MariaDB reads @fence_now before it is assigned.
        await conn.query({
          sql: 'SET @fence_now = FLOOR(UNIX_TIMESTAMP(NOW(6)) * 1000)',
          timeout: this.#db.options.queryTimeoutMs,
        });
        await conn.query({
          sql: 'SET @fence_hw = @fence_now + ?, @fence_free = @fence_now + ?',
          values: [pool.ttlMs + pool.maxSkewMs, pool.ttlMs + pool.reuseDelayMs],
          timeout: this.#db.options.queryTimeoutMs,
        });
        for (let first = 0; first < size; first += FENCE_ROWS_PER_STATEMENT) {
          const ids = Array.from({ length: Math.min(FENCE_ROWS_PER_STATEMENT, size - first) }, (_, i) => first + i);
          await conn.query({
            sql:
              `INSERT INTO ticketd_worker_leases (pool, worker_id, epoch, holder, high_water_ms, expires_ms, free_ms) VALUES ${ids.map(() => "(?, ?, 0, 'fence', @fence_hw, @fence_now, @fence_free)").join(', ')} ` +
              'ON DUPLICATE KEY UPDATE high_water_ms = GREATEST(high_water_ms, @fence_hw), expires_ms = LEAST(expires_ms, @fence_now), free_ms = GREATEST(free_ms, @fence_free)',
            values: ids.flatMap((w) => [pool.name, w]),
            timeout: this.#db.options.ddlTimeoutMs,
          });
        }
      }),
    );
  }

  async #outdatedIfMissing<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (isNoSuchTable(error))
        throw new SchemaOutdatedError(
          `backend ${this.#db.label} has no worker-pool tables (schema of a ticketd before 0.7); run npx ticketd init`,
          { cause: error },
        );
      throw error;
    }
  }
}

function toRecord(row: RowDataPacket): LeaseRecord {
  const optional = (v: unknown): number | undefined => (v === null || v === undefined ? undefined : Number(v));
  return {
    workerId: Number(row.worker_id),
    epoch: BigInt(String(row.epoch)),
    holder: String(row.holder),
    highWaterMs: Number(row.high_water_ms),
    expiresMs: Number(row.expires_ms),
    freeMs: Number(row.free_ms),
    releasedMs: optional(row.released_ms),
    lastUsedMs: optional(row.last_used_ms),
  };
}

function toTime(row: RowDataPacket | undefined): ServerTime {
  if (row === undefined) throw new Error('the backend returned no clock reading');
  const nowUs = BigInt(String(row.now_us));
  return { nowMs: Number(nowUs / 1000n), nowUs };
}

/** How many worker pools a backend holds (for `ticketd check`: whether worker leases are in use). */
export async function countWorkerPools(db: Db): Promise<number> {
  const [rows] = await db.withConnection((conn) =>
    conn.query<RowDataPacket[]>({
      sql: 'SELECT COUNT(*) AS pools FROM ticketd_worker_pools',
      timeout: db.options.queryTimeoutMs,
    }),
  );
  return Number(rows[0]?.pools ?? 0);
}
