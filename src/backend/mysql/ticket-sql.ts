/** Tickets: REPLACE runs (one in flight per table), counters read and advanced. */
import type { ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import pRetry from 'p-retry';
import { MAX_UINT64 } from '../../core/blocks.js';
import { GATED_STUB_COLUMN, RETIRED_COLUMN } from '../../core/versions.js';
import type { TicketBatch } from '../ticket-backend.js';
import { isDeadlock, isDuplicateKey, overflowError, retiredTableError } from './errors.js';
import type { Connection, Db } from './pool.js';
import { createTicketTableStatement, ticketTable } from './schema.js';

/** A backend's ticket tables. */
export class TicketSql {
  readonly #db: Db;
  /** Tail of the queue of REPLACE runs per ticket table: at most one in flight (they deadlock). */
  readonly #lanes = new Map<string, Promise<unknown>>();

  constructor(db: Db) {
    this.#db = db;
  }

  /** Runs REPLACE `count` times in a row on one connection, after any run already in flight. */
  fetchTickets(sequence: string, count: number): Promise<TicketBatch> {
    const table = ticketTable(sequence);
    const previous = this.#lanes.get(table) ?? Promise.resolve();
    const run = previous.then(() => this.#replaceRun(sequence, table, count));
    const tail = run.catch(() => undefined);
    this.#lanes.set(table, tail);
    void tail.then(() => {
      if (this.#lanes.get(table) === tail) this.#lanes.delete(table);
    });
    return run;
  }

  async #replaceRun(sequence: string, table: string, count: number): Promise<TicketBatch> {
    const tickets: bigint[] = [];
    try {
      await this.#db.withConnection(async (conn) => {
        for (let i = 0; i < count; i++) {
          // One autocommit REPLACE per ticket: batching them in a transaction makes each slower.
          const ticket = await pRetry(() => this.#replace(conn, table), {
            retries: this.#db.options.deadlockRetries,
            minTimeout: 1,
            maxTimeout: 50,
            randomize: true,
            shouldRetry: ({ error }) => isDeadlock(error),
          });
          tickets.push(ticket);
        }
      });
      return { tickets, error: undefined };
    } catch (error) {
      return {
        tickets,
        error: retiredTableError(overflowError(error, this.#db.label, table), this.#db.label, sequence),
      };
    }
  }

  async #replace(conn: Connection, table: string): Promise<bigint> {
    const [result] = await conn.query<ResultSetHeader>({
      // By position, not by column name: init renames the stub column of a sequence it gates (core/versions.ts).
      sql: `REPLACE INTO ${table} VALUES (NULL, 'a')`,
      timeout: this.#db.options.queryTimeoutMs,
    });
    // insertId is read from this statement's own OK packet, on the connection that ran it.
    return toTicket(result.insertId);
  }

  /**
   * Creates the ticket table and advances its counter to firstTicket. Until the sequence row
   * exists nothing takes tickets from it, so a migration can stop here and leave no trace but a gap.
   */
  prepareSequence(name: string, firstTicket: bigint): Promise<void> {
    return this.#db.withAdminConnection(async (conn) => {
      await conn.query({ sql: createTicketTableStatement(name), timeout: this.#db.options.ddlTimeoutMs });
      await this.#advance(conn, ticketTable(name), firstTicket);
    });
  }

  /**
   * Renames the ticket table's `stub` column, once (core/versions.ts): from then on a ticketd 0.5 or
   * older that loaded the sequence earlier cannot take another ticket from it. The counter is kept.
   */
  gateTicketTable(name: string): Promise<void> {
    const table = ticketTable(name);
    return this.#db.withAdminConnection(async (conn) => {
      if (!(await this.#hasColumn(conn, name, 'stub'))) return;
      await conn.query({
        sql: `ALTER TABLE ${table} RENAME COLUMN stub TO ${GATED_STUB_COLUMN}`,
        timeout: this.#db.options.ddlTimeoutMs,
      });
    });
  }

  /**
   * Stops the ticket table taking tickets from any ticketd, at once and for good (a retired sequence):
   * its stub column is renamed, as gating does, which stops 0.5 and older (they REPLACE by column
   * name), and it gains a column, which stops every later one (they REPLACE by position, two values).
   * The counter and the rows are kept. Idempotent.
   */
  retireTicketTable(name: string): Promise<void> {
    const table = ticketTable(name);
    return this.gateTicketTable(name).then(() =>
      this.#db.withAdminConnection(async (conn) => {
        if (await this.#hasColumn(conn, name, RETIRED_COLUMN)) return;
        await conn.query({
          sql: `ALTER TABLE ${table} ADD COLUMN ${RETIRED_COLUMN} TINYINT NOT NULL DEFAULT 1`,
          timeout: this.#db.options.ddlTimeoutMs,
        });
      }),
    );
  }

  /** Whether the sequence's ticket table has the column now (gating and retiring change it once). */
  async #hasColumn(conn: Connection, sequence: string, column: string): Promise<boolean> {
    const [rows] = await conn.query<RowDataPacket[]>({
      sql: 'SELECT 1 FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?',
      values: [`tickets_${sequence}`, column],
      timeout: this.#db.options.queryTimeoutMs,
    });
    return rows.length > 0;
  }

  /**
   * Advances the sequence's counter so the next ticket is ≥ minTicket, with the serving account's
   * INSERT and DELETE alone (no ALTER): a row with id minTicket − 1 is inserted and deleted in one
   * transaction. InnoDB moves AUTO_INCREMENT past an explicit id at or above it and never lowers it
   * for one below (design.md, "Measured"), so this can only move the counter forward; the next
   * ticket is then the backend's first class member above that id.
   */
  advanceCounter(sequence: string, minTicket: bigint): Promise<void> {
    const table = ticketTable(sequence);
    // Not queued behind the table's REPLACE runs: a run of hundreds of tickets from a regressed
    // counter would hold the advance up, and a deadlock with one is retried.
    return pRetry(() => this.#db.withConnection((conn) => this.#advanceByInsert(conn, table, minTicket)), {
      retries: this.#db.options.deadlockRetries,
      minTimeout: 1,
      maxTimeout: 50,
      randomize: true,
      shouldRetry: ({ error }) => isDeadlock(error),
    });
  }

  async #advanceByInsert(conn: Connection, table: string, minTicket: bigint): Promise<void> {
    if (minTicket <= 1n) return;
    const below = (minTicket - 1n).toString();
    const timeout = this.#db.options.queryTimeoutMs;
    // One round trip (the pool runs multiple statements): the row never outlives its transaction.
    // By column name `id` alone: the stub column (renamed once gated) and a retired table's extra
    // column take their defaults.
    try {
      await conn.query({
        sql: `START TRANSACTION; INSERT INTO ${table} (id) VALUES (${below}); DELETE FROM ${table} WHERE id = ${below}; COMMIT`,
        timeout,
      });
    } catch (error) {
      await conn.query({ sql: 'ROLLBACK', timeout }).catch(() => undefined);
      // The id is the ticket row's own: the counter is already past it, so there is nothing to do.
      if (isDuplicateKey(error) && (await this.#rowHolds(conn, table, below))) return;
      throw error;
    }
  }

  /** Whether the ticket table's one row has this id (its last ticket). */
  async #rowHolds(conn: Connection, table: string, id: string): Promise<boolean> {
    const [rows] = await conn.query<RowDataPacket[]>({
      sql: `SELECT 1 FROM ${table} WHERE id = ${id}`,
      timeout: this.#db.options.queryTimeoutMs,
    });
    return rows.length > 0;
  }

  async #advance(conn: Connection, table: string, minTicket: bigint): Promise<void> {
    // Creating a sequence (admin): MySQL ignores an AUTO_INCREMENT below the current maximum, so this can only move forward.
    if (minTicket > 1n)
      await conn.query({
        sql: `ALTER TABLE ${table} AUTO_INCREMENT = ${minTicket.toString()}`,
        timeout: this.#db.options.ddlTimeoutMs,
      });
  }

  /** The last ticket this backend issued for the sequence (0 when none). */
  async lastTicket(sequence: string): Promise<bigint> {
    const [rows] = await this.#db.withConnection((conn) =>
      conn.query<RowDataPacket[]>({
        sql: `SELECT MAX(id) AS id FROM ${ticketTable(sequence)}`,
        timeout: this.#db.options.queryTimeoutMs,
      }),
    );
    const id: unknown = rows[0]?.id;
    return id === null || id === undefined ? 0n : BigInt(id as string | number);
  }

  /** The lowest ticket the counter can issue next: AUTO_INCREMENT, and at least the last ticket + 1. */
  async nextTicket(sequence: string): Promise<bigint> {
    const table = ticketTable(sequence);
    const [results] = await this.#db.withConnection((conn) =>
      conn.query<RowDataPacket[][]>({
        // SHOW CREATE TABLE reads the live counter; information_schema.TABLES is cached on MySQL 8.
        sql: `SELECT MAX(id) AS id FROM ${table}; SHOW CREATE TABLE ${table}`,
        timeout: this.#db.options.queryTimeoutMs,
      }),
    );
    const last: unknown = results[0]?.[0]?.id;
    const text = String(results[1]?.[0]?.['Create Table'] ?? '');
    // No AUTO_INCREMENT= clause: the counter has never moved, so the next value is 1.
    const autoIncrement = BigInt(/\) .*AUTO_INCREMENT=(\d+)/s.exec(text)?.[1] ?? '1');
    const afterLast = last === null || last === undefined ? 1n : BigInt(last as string | number) + 1n;
    return autoIncrement > afterLast ? autoIncrement : afterLast;
  }
}

/** Converts a mysql2 insertId into an exact ticket; rejects anything that is not a positive integer. */
export function toTicket(insertId: unknown): bigint {
  // insertId arrives as a number below 2^53 and as a string above it; Number would round it.
  if (typeof insertId === 'number' && !Number.isSafeInteger(insertId)) {
    throw new RangeError(`insertId ${insertId} is not an exact integer`);
  }
  if (typeof insertId !== 'number' && typeof insertId !== 'string' && typeof insertId !== 'bigint') {
    throw new TypeError(`insertId has type ${typeof insertId}, expected a number or string`);
  }
  const text = String(insertId);
  if (!/^-?[0-9]+$/.test(text)) throw new RangeError(`insertId ${text} is not an integer`);
  let ticket = BigInt(text);
  // mysql2 reads the OK packet's insertId as a signed 64-bit value, so BIGINT UNSIGNED tickets of
  // 2^63 and above arrive negative; the same 64 bits read unsigned are the value plus 2^64.
  if (ticket < 0n && ticket >= -(1n << 63n)) ticket += 1n << 64n;
  if (ticket <= 0n || ticket > MAX_UINT64) throw new RangeError(`insertId ${text} is not a positive ticket`);
  return ticket;
}
