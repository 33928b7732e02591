/** Strict sequences' lease rows on MySQL (core/strict.ts says what they mean). */
import type { ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { mayTake, STRICT_LEASE_MS, type StrictRow } from '../../core/strict.js';
import { SchemaOutdatedError } from '../../core/errors.js';
import { STRICT_VERSION } from '../../core/versions.js';
import type { StrictStore, StrictTake } from '../strict-store.js';
import { isNoSuchTable } from './errors.js';
import type { Connection, Db } from './pool.js';

const COLUMNS = 'epoch, leader, leader_url, expires_ms, bound';
/**
 * A bound as a parameter. Bare, GREATEST(bound, '…') compares as strings on MySQL ('9990000' beats
 * '10001000') and as doubles on MariaDB (above 2^53 the bound is rounded, possibly down).
 */
const BOUND_PARAM = 'CAST(? AS DECIMAL(20, 0))';
/** This backend's clock in ms. In a locking read, SYSDATE is read once the lock is granted. */
const NOW_MS = 'FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000)';
const LOCKED_NOW_MS = 'FLOOR(UNIX_TIMESTAMP(SYSDATE(3)) * 1000)';

/** The store of one backend. */
export class StrictSql implements StrictStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  read(name: string): Promise<StrictRow | undefined> {
    return this.#outdatedIfMissing(async () => {
      const [rows] = await this.#db.withConnection((conn) =>
        conn.query<RowDataPacket[]>({
          sql: `SELECT ${COLUMNS}, ${NOW_MS} AS now_ms FROM ticketd_strict_sequences WHERE name = ?`,
          values: [name],
          timeout: this.#db.options.claimTimeoutMs,
        }),
      );
      return rows[0] === undefined ? undefined : toRow(rows[0]);
    });
  }

  take(name: string, epoch: bigint, candidate: string, url: string, startAfter: bigint): Promise<StrictTake> {
    return this.#outdatedIfMissing(() =>
      this.#db.withConnection((conn) => this.#takeOn(conn, name, epoch, candidate, url, startAfter)),
    );
  }

  async #takeOn(
    conn: Connection,
    name: string,
    epoch: bigint,
    candidate: string,
    url: string,
    startAfter: bigint,
  ): Promise<StrictTake> {
    const timeout = this.#db.options.claimTimeoutMs;
    // A backend added after the sequence was created lacks the row: free, at startAfter. Committed
    // on its own, before the locking read (locking a missing row takes a gap lock).
    await conn.query({
      sql: "INSERT IGNORE INTO ticketd_strict_sequences (name, epoch, leader, leader_url, expires_ms, bound) VALUES (?, 0, '', '', 0, ?)",
      values: [name, String(startAfter)],
      timeout,
    });
    await conn.query({ sql: 'START TRANSACTION', timeout });
    try {
      const [rows] = await conn.query<RowDataPacket[]>({
        sql: `SELECT ${COLUMNS}, ${LOCKED_NOW_MS} AS now_ms FROM ticketd_strict_sequences WHERE name = ? FOR UPDATE`,
        values: [name],
        timeout,
      });
      if (rows[0] === undefined)
        throw new Error(
          `backend ${this.#db.label} lost the lease row of strict sequence ${name} inside its transaction`,
        );
      const row = toRow(rows[0]);
      const won = mayTake(row, epoch, candidate);
      if (won) {
        // REPLACE under the row's lock, not UPDATE: the serving account has INSERT and DELETE, not UPDATE.
        await conn.query({
          sql: `REPLACE INTO ticketd_strict_sequences (name, epoch, leader, leader_url, expires_ms, bound) VALUES (?, ?, ?, ?, ${NOW_MS} + ?, ${BOUND_PARAM})`,
          values: [name, String(epoch), candidate, url, STRICT_LEASE_MS, String(row.bound)],
          timeout,
        });
      }
      await conn.query({ sql: 'COMMIT', timeout });
      return { won, row };
    } catch (error) {
      await conn.query({ sql: 'ROLLBACK', timeout }).catch(() => undefined);
      throw error;
    }
  }

  extend(name: string, epoch: bigint, leader: string, bound: bigint): Promise<boolean> {
    return this.#outdatedIfMissing(async () => {
      const [result] = await this.#db.withConnection((conn) =>
        // One statement, so the condition and the write are one step, as an UPDATE would be; REPLACE …
        // SELECT needs only INSERT, DELETE and SELECT. It counts 2 rows (delete + insert) when it writes.
        conn.query<ResultSetHeader>({
          sql:
            `REPLACE INTO ticketd_strict_sequences (name, epoch, leader, leader_url, expires_ms, bound) ` +
            `SELECT name, epoch, leader, leader_url, ${NOW_MS} + ?, GREATEST(bound, ${BOUND_PARAM}) FROM ticketd_strict_sequences ` +
            `WHERE name = ? AND epoch = ? AND leader = ? AND expires_ms > ${NOW_MS}`,
          values: [STRICT_LEASE_MS, String(bound), name, String(epoch), leader],
          timeout: this.#db.options.claimTimeoutMs,
        }),
      );
      return result.affectedRows > 0;
    });
  }

  async resign(name: string, epoch: bigint, leader: string): Promise<void> {
    await this.#outdatedIfMissing(() =>
      this.#db.withConnection((conn) =>
        conn.query({
          sql:
            'REPLACE INTO ticketd_strict_sequences (name, epoch, leader, leader_url, expires_ms, bound) ' +
            'SELECT name, epoch, leader, leader_url, 0, bound FROM ticketd_strict_sequences WHERE name = ? AND epoch = ? AND leader = ?',
          values: [name, String(epoch), leader],
          timeout: this.#db.options.claimTimeoutMs,
        }),
      ),
    );
  }

  async #outdatedIfMissing<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (isNoSuchTable(error))
        throw new SchemaOutdatedError(
          `backend ${this.#db.label} has no ticketd_strict_sequences (schema of a ticketd before ${STRICT_VERSION}); run npx ticketd init`,
          { cause: error },
        );
      throw error;
    }
  }
}

function toRow(row: RowDataPacket): StrictRow {
  return {
    epoch: BigInt(String(row.epoch)),
    leader: String(row.leader),
    leaderUrl: String(row.leader_url),
    expiresMs: Number(row.expires_ms),
    bound: BigInt(String(row.bound)),
    nowMs: Number(row.now_ms),
  };
}
