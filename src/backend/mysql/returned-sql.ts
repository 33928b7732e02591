/** Returned ranges, their claims and the lease secret on one backend (backend/returned-range-store.ts). */
import type { ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import type { ReturnedRange } from '../../core/returned-ranges.js';
import type { ReturnedRangeStore, TakeOutcome } from '../returned-range-store.js';
import { isDuplicateKey } from './errors.js';
import type { Db } from './pool.js';

const KEY = 'sequence = ? AND last_id = ? AND generation = ?';

function keyValues(range: ReturnedRange): string[] {
  return [range.sequence, String(range.last), String(range.generation)];
}

/** The serving account's statements for returned ranges: SELECT, INSERT and DELETE only. */
export class ReturnedSql implements ReturnedRangeStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async record(range: ReturnedRange): Promise<boolean> {
    const db = this.#db;
    return db.withConnection(async (conn) => {
      // A key claimed here was reused already: this is a second return of the same tail.
      const [claimed] = await conn.query<RowDataPacket[]>({
        sql: `SELECT 1 FROM ticketd_range_claims WHERE ${KEY}`,
        values: keyValues(range),
        timeout: db.options.queryTimeoutMs,
      });
      if (claimed.length > 0) return false;
      try {
        await conn.query({
          sql: 'INSERT INTO ticketd_returned_ranges (sequence, last_id, generation, first_id) VALUES (?, ?, ?, ?)',
          values: [...keyValues(range), String(range.first)],
          timeout: db.options.queryTimeoutMs,
        });
        return true;
      } catch (error) {
        if (isDuplicateKey(error)) return false;
        throw error;
      }
    });
  }

  async list(sequence: string, limit: number): Promise<ReturnedRange[]> {
    const db = this.#db;
    const [rows] = await db.withConnection((conn) =>
      conn.query<RowDataPacket[]>({
        sql: 'SELECT first_id, last_id, generation FROM ticketd_returned_ranges WHERE sequence = ? ORDER BY last_id, generation LIMIT ?',
        values: [sequence, limit],
        timeout: db.options.queryTimeoutMs,
      }),
    );
    return rows.map((r) => ({
      sequence,
      first: BigInt(String(r.first_id)),
      last: BigInt(String(r.last_id)),
      generation: Number(r.generation),
    }));
  }

  async take(range: ReturnedRange): Promise<TakeOutcome> {
    const db = this.#db;
    return db.withConnection(async (conn) => {
      await conn.beginTransaction();
      try {
        const [deleted] = await conn.query<ResultSetHeader>({
          sql: `DELETE FROM ticketd_returned_ranges WHERE ${KEY} AND first_id = ?`,
          values: [...keyValues(range), String(range.first)],
          timeout: db.options.claimTimeoutMs,
        });
        // Zero rows: another process deleted it first (the row lock orders us after it). Never more than one: it is the key.
        if (deleted.affectedRows !== 1) {
          await conn.rollback();
          return 'gone';
        }
        await conn.query({
          sql: 'INSERT INTO ticketd_range_claims (sequence, last_id, generation) VALUES (?, ?, ?)',
          values: keyValues(range),
          timeout: db.options.claimTimeoutMs,
        });
        await conn.commit();
        return 'taken';
      } catch (error) {
        await conn.rollback().catch(() => undefined);
        if (!isDuplicateKey(error)) throw error;
        // Claimed here before: a row brought back by a restore, or a tail returned twice. It goes.
        await conn.query({
          sql: `DELETE FROM ticketd_returned_ranges WHERE ${KEY}`,
          values: keyValues(range),
          timeout: db.options.queryTimeoutMs,
        });
        return 'claimed-before';
      }
    });
  }

  async claim(range: ReturnedRange): Promise<boolean> {
    const db = this.#db;
    try {
      await db.withConnection((conn) =>
        conn.query({
          sql: 'INSERT INTO ticketd_range_claims (sequence, last_id, generation) VALUES (?, ?, ?)',
          values: keyValues(range),
          timeout: db.options.claimTimeoutMs,
        }),
      );
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  async dropAll(): Promise<number> {
    const db = this.#db;
    const [result] = await db.withConnection((conn) =>
      conn.query<ResultSetHeader>({ sql: 'DELETE FROM ticketd_returned_ranges', timeout: db.options.queryTimeoutMs }),
    );
    return result.affectedRows;
  }

  async leaseSecret(fresh: () => Uint8Array): Promise<Uint8Array> {
    const db = this.#db;
    return db.withConnection(async (conn) => {
      const read = async (): Promise<Uint8Array | undefined> => {
        const [rows] = await conn.query<RowDataPacket[]>({
          sql: 'SELECT secret FROM ticketd_lease_secrets WHERE singleton = 1',
          timeout: db.options.queryTimeoutMs,
        });
        const secret = rows[0]?.secret as Buffer | undefined;
        return secret === undefined ? undefined : new Uint8Array(secret);
      };
      const held = await read();
      if (held !== undefined) return held;
      // Two processes making it at once: INSERT IGNORE keeps the first, and both read that one.
      await conn.query({
        sql: 'INSERT IGNORE INTO ticketd_lease_secrets (singleton, secret) VALUES (1, ?)',
        values: [Buffer.from(fresh())],
        timeout: db.options.queryTimeoutMs,
      });
      const made = await read();
      if (made === undefined) throw new Error(`backend ${db.label} holds no lease secret after making one`);
      return made;
    });
  }
}
