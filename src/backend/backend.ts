/** One MySQL ticket server: its pool, ticket fetches, schema and sequence rows. */
import mysql from 'mysql2/promise';
import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import pRetry from 'p-retry';
import { toTicket } from '../core/blocks.js';
import type { ServerSettings, Stripe } from '../core/stripes.js';
import { PERMUTATION_SCHEME } from 'ticketd-client';
import { describeSettings, onlyKeyDiffers, sameSettings, withKey, type SequenceSettings } from '../core/sequence.js';
import { BackendAccessDeniedError, CounterOverflowError, SequenceConflictError, TicketClaimedBeforeError } from '../errors.js';
import { createTicketTableStatement, schemaStatements, ticketTable } from './sql.js';
import type { BackendAddress } from './backend-address.js';
import type { Claim, ClassClaims, TicketBackend, TicketBatch } from './ticket-backend.js';

export type { Claim, ClassClaims, TicketBackend, TicketBatch } from './ticket-backend.js';

/** Timeouts and pool size for one backend. */
export interface BackendOptions {
  readonly connectTimeoutMs: number;
  readonly queryTimeoutMs: number;
  /** Timeout of a claim: refills wait for it, so it is shorter. */
  readonly claimTimeoutMs: number;
  /** Timeout of CREATE and ALTER: fast on one-row tables, but a hung server must not hold them forever. */
  readonly ddlTimeoutMs: number;
  readonly poolSize: number;
  /** Deadlock retries per REPLACE. */
  readonly deadlockRetries: number;
}

/** Defaults: a hung backend is given up on within a second. */
export const DEFAULT_BACKEND_OPTIONS: BackendOptions = Object.freeze({
  connectTimeoutMs: 1000,
  queryTimeoutMs: 1000,
  claimTimeoutMs: 500,
  ddlTimeoutMs: 10_000,
  poolSize: 4,
  deadlockRetries: 8,
});

/** Called for every new connection before it is used; throws to refuse the connection. */
export type ConnectionGuard = (backend: Backend, settings: ServerSettings) => void;

const ER_LOCK_DEADLOCK = 1213;
const ER_DUP_ENTRY = 1062;
const ER_NO_SUCH_TABLE = 1146;
/** ER_AUTOINC_READ_FAILED and ER_WARN_DATA_OUT_OF_RANGE: the counter reached the column's maximum. */
const COUNTER_OVERFLOW_ERRNOS = new Set([1467, 1264]);
/** ER_DBACCESS_DENIED_ERROR, ER_ACCESS_DENIED_ERROR, ER_TABLEACCESS_DENIED_ERROR: a missing GRANT. */
const ACCESS_DENIED_ERRNOS = new Set([1044, 1045, 1142]);
/** Claims pruned per DELETE, so that a first prune of a large table does not hold locks for long. */
const PRUNE_DELETE_BATCH = 10_000;

/** A ticket server. Every connection is checked by the guard before its first use. */
export class Backend implements TicketBackend {
  readonly address: BackendAddress;
  readonly label: string;
  readonly #options: BackendOptions;
  readonly #pool: Pool;
  /** The account for schema and counter changes (TICKETD_ADMIN_BACKENDS); the serving pool without one. */
  readonly #adminPool: Pool;
  readonly #guard: ConnectionGuard;
  #verified = new WeakSet<object>();
  /** Tail of the queue of REPLACE runs per ticket table: at most one in flight (they deadlock). */
  readonly #lanes = new Map<string, Promise<unknown>>();

  constructor(address: BackendAddress, guard: ConnectionGuard, options: BackendOptions = DEFAULT_BACKEND_OPTIONS, admin?: BackendAddress) {
    this.address = address;
    this.label = address.label;
    this.#options = options;
    this.#guard = guard;
    this.#pool = createPool(address, options, options.poolSize);
    this.#adminPool = admin === undefined ? this.#pool : createPool(admin, options, 1);
  }

  /** Runs REPLACE `count` times in a row on one connection, after any run already in flight. */
  fetchTickets(sequence: string, count: number): Promise<TicketBatch> {
    const table = ticketTable(sequence);
    const previous = this.#lanes.get(table) ?? Promise.resolve();
    const run = previous.then(() => this.#replaceRun(table, count));
    const tail = run.catch(() => undefined);
    this.#lanes.set(table, tail);
    void tail.then(() => {
      if (this.#lanes.get(table) === tail) this.#lanes.delete(table);
    });
    return run;
  }

  async #replaceRun(table: string, count: number): Promise<TicketBatch> {
    const tickets: bigint[] = [];
    try {
      await this.withConnection(async (conn) => {
        for (let i = 0; i < count; i++) {
          // One autocommit REPLACE per ticket: batching them in a transaction makes each slower.
          const ticket = await pRetry(() => this.#replace(conn, table), {
            retries: this.#options.deadlockRetries,
            minTimeout: 1,
            maxTimeout: 50,
            randomize: true,
            shouldRetry: ({ error }) => (error as { errno?: number }).errno === ER_LOCK_DEADLOCK,
          });
          tickets.push(ticket);
        }
      });
      return { tickets, error: undefined };
    } catch (error) {
      const overflow = COUNTER_OVERFLOW_ERRNOS.has(errnoOf(error) ?? 0);
      return { tickets, error: overflow ? new CounterOverflowError(`backend ${this.label}: ${table} reached its column's maximum`, { cause: error }) : error };
    }
  }

  async #replace(conn: PoolConnection, table: string): Promise<bigint> {
    const [result] = await conn.query<ResultSetHeader>({
      sql: `REPLACE INTO ${table} (stub) VALUES ('a')`,
      timeout: this.#options.queryTimeoutMs,
    });
    // insertId is read from this statement's own OK packet, on the connection that ran it.
    return toTicket(result.insertId);
  }

  /** Runs fn on a checked connection; a connection that saw an error is destroyed, not reused. */
  withConnection<T>(fn: (conn: PoolConnection) => Promise<T>): Promise<T> {
    return this.#withPoolConnection(this.#pool, fn);
  }

  /** The same, on the admin account: CREATE, ALTER and the sequence rows. */
  #withAdminConnection<T>(fn: (conn: PoolConnection) => Promise<T>): Promise<T> {
    return this.#withPoolConnection(this.#adminPool, fn);
  }

  async #withPoolConnection<T>(pool: Pool, fn: (conn: PoolConnection) => Promise<T>): Promise<T> {
    const conn = await pool.getConnection();
    try {
      if (!this.#verified.has(conn.connection)) {
        this.#guard(this, await this.#readSession(conn));
        this.#verified.add(conn.connection);
      }
      const result = await fn(conn);
      conn.release();
      return result;
    } catch (error) {
      conn.destroy();
      if (ACCESS_DENIED_ERRNOS.has(errnoOf(error) ?? 0)) {
        throw new BackendAccessDeniedError(`backend ${this.label}: ${(error as Error).message}`, { cause: error });
      }
      throw error;
    }
  }

  /** Checks the settings of every connection again before its next use (after an idle spell or a break). */
  forgetVerifiedConnections(): void {
    this.#verified = new WeakSet();
  }

  async #readSession(conn: PoolConnection): Promise<ServerSettings> {
    const timeout = this.#options.queryTimeoutMs;
    const [rows] = await conn.query<RowDataPacket[]>({
      sql:
        'SELECT @@session.auto_increment_increment AS inc, @@session.auto_increment_offset AS off, ' +
        '@@global.innodb_flush_log_at_trx_commit AS flush, @@global.sync_binlog AS sync_binlog, @@global.log_bin AS log_bin',
      timeout,
    });
    const row = rows[0];
    if (row === undefined) throw new Error(`backend ${this.label} returned no session settings`);
    // MySQL without Galera has no wsrep_* variables at all; SHOW … WHERE works on both.
    const [wsrep] = await conn.query<RowDataPacket[]>({
      sql: "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('wsrep_on', 'wsrep_auto_increment_control')",
      timeout,
    });
    const on = (name: string): boolean => wsrep.some((r) => r.Variable_name === name && String(r.Value).toUpperCase() === 'ON');
    return {
      increment: BigInt(String(row.inc)),
      offset: BigInt(String(row.off)),
      flushLogAtTrxCommit: Number(row.flush),
      syncBinlog: Number(row.sync_binlog),
      logBin: Number(row.log_bin) === 1,
      galeraAutoIncrementControl: on('wsrep_on') && on('wsrep_auto_increment_control'),
      identity: await this.#readIdentity(conn),
    };
  }

  /** Connects (a fresh check of the server's settings) and returns what it reports. */
  async settings(): Promise<ServerSettings> {
    return this.withConnection((conn) => this.#readSession(conn));
  }

  /** Applies sql/schema.sql and writes this backend's identity if it has none. Idempotent. */
  async applySchema(): Promise<string> {
    return this.#withAdminConnection(async (conn) => {
      for (const statement of schemaStatements()) await conn.query({ sql: statement, timeout: this.#options.ddlTimeoutMs });
      await conn.query('INSERT IGNORE INTO ticketd_backend (singleton, backend_id) VALUES (1, UUID())');
      const identity = await this.#readIdentity(conn);
      if (identity === undefined) throw new Error(`backend ${this.label} has no identity row after init`);
      return identity;
    });
  }

  /** The identity `init` wrote (MariaDB has no @@server_uuid), or undefined before init. */
  async #readIdentity(conn: PoolConnection): Promise<string | undefined> {
    try {
      const [rows] = await conn.query<RowDataPacket[]>({
        sql: 'SELECT backend_id FROM ticketd_backend WHERE singleton = 1',
        timeout: this.#options.queryTimeoutMs,
      });
      const id = rows[0]?.backend_id;
      return typeof id === 'string' ? id : undefined;
    } catch (error) {
      if ((error as { code?: string }).code === 'ER_NO_SUCH_TABLE') return undefined;
      throw error;
    }
  }

  /** Tables of sql/schema.sql that this backend lacks (an older schema, or init never ran). */
  async missingSchemaTables(): Promise<string[]> {
    const wanted = ['ticketd_sequences', 'ticketd_sequence_keys', 'ticketd_backend', 'ticketd_claims', 'ticketd_claim_floors'];
    const [rows] = await this.withConnection((conn) =>
      conn.query<RowDataPacket[]>({
        sql: 'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (?)',
        values: [wanted],
        timeout: this.#options.queryTimeoutMs,
      }),
    );
    const present = new Set(rows.map((r) => String(r.name)));
    return wanted.filter((t) => !present.has(t));
  }

  /** Storage engine of every ticket table, by sequence name. */
  async ticketTableEngines(): Promise<Map<string, string>> {
    const [rows] = await this.withConnection((conn) =>
      conn.query<RowDataPacket[]>({
        sql: "SELECT TABLE_NAME AS name, ENGINE AS engine FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'tickets\\_%'",
        timeout: this.#options.queryTimeoutMs,
      }),
    );
    return new Map(rows.map((r) => [String(r.name).slice('tickets_'.length), String(r.engine)]));
  }

  /**
   * Claims the tickets in one multi-row INSERT, then reads the floors in the same round trip and
   * returns them (the ticket guard judges them). The floor is read after the insert: a prune
   * commits its floor before it deletes any claim, so a ticket whose old claim was pruned away
   * meets the floor, and one whose old claim is still there meets the duplicate key.
   */
  async claimTickets(claim: Claim): Promise<ClassClaims[]> {
    if (claim.tickets.length === 0) return [];
    const { increment, offset } = claim.stripe;
    const residue = String(offset % increment);
    const values = claim.tickets.flatMap((t) => [claim.sequence, String(t), String(increment), residue, claim.source]);
    let floors: RowDataPacket[];
    try {
      const [results] = await this.withConnection((conn) =>
        conn.query<RowDataPacket[][]>({
          sql:
            `INSERT INTO ticketd_claims (sequence, ticket, stripe_increment, stripe_residue, backend_id) VALUES ${claim.tickets.map(() => '(?, ?, ?, ?, ?)').join(', ')}; ` +
            'SELECT stripe_increment AS inc, stripe_residue AS residue, MAX(floor_ticket) AS floor FROM ticketd_claim_floors WHERE sequence = ? GROUP BY stripe_increment, stripe_residue',
          values: [...values, claim.sequence],
          timeout: this.#options.claimTimeoutMs,
        }),
      );
      floors = results[1] ?? [];
    } catch (error) {
      if (errnoOf(error) !== ER_DUP_ENTRY) throw error;
      throw new TicketClaimedBeforeError(
        `backend ${this.label} already holds a claim for one of tickets ${claim.tickets[0]}..${claim.tickets[claim.tickets.length - 1]} of sequence ${claim.sequence}`,
        'duplicate',
        { cause: error },
      );
    }
    return floors.map(toClassClaims);
  }

  /** Highest claim and floor per residue class of a sequence, in one round trip. */
  async readClaims(sequence: string): Promise<ClassClaims[]> {
    const [results] = await this.withConnection((conn) =>
      conn.query<RowDataPacket[][]>({
        sql:
          'SELECT stripe_increment AS inc, stripe_residue AS residue, MAX(ticket) AS highest FROM ticketd_claims WHERE sequence = ? GROUP BY stripe_increment, stripe_residue; ' +
          'SELECT stripe_increment AS inc, stripe_residue AS residue, MAX(floor_ticket) AS floor FROM ticketd_claim_floors WHERE sequence = ? GROUP BY stripe_increment, stripe_residue',
        values: [sequence, sequence],
        timeout: this.#options.queryTimeoutMs,
      }),
    );
    const byClass = new Map<string, ClassClaims>();
    for (const row of [...(results[0] ?? []), ...(results[1] ?? [])]) {
      const c = toClassClaims(row);
      const key = `${c.increment}/${c.residue}`;
      const known = byClass.get(key);
      byClass.set(key, { ...c, highest: known?.highest ?? c.highest, floor: known?.floor ?? c.floor });
    }
    return [...byClass.values()];
  }

  /**
   * Keeps the newest `keep` claims of the stripe's class. The floor is committed before any claim
   * is deleted, so no ticket is ever neither claimed nor below the floor.
   */
  async pruneClaims(sequence: string, stripe: Stripe, keep: number): Promise<bigint | undefined> {
    const cls = [sequence, String(stripe.increment), String(stripe.offset % stripe.increment)];
    const timeout = this.#options.ddlTimeoutMs;
    return this.withConnection(async (conn) => {
      const [rows] = await conn.query<RowDataPacket[]>({
        sql: 'SELECT ticket FROM ticketd_claims WHERE sequence = ? AND stripe_increment = ? AND stripe_residue = ? ORDER BY ticket DESC LIMIT 1 OFFSET ?',
        values: [...cls, keep],
        timeout,
      });
      if (rows[0] === undefined) return undefined;
      const floor = BigInt(String(rows[0].ticket));
      await conn.query({ sql: 'INSERT IGNORE INTO ticketd_claim_floors (sequence, stripe_increment, stripe_residue, floor_ticket) VALUES (?, ?, ?, ?)', values: [...cls, String(floor)], timeout });
      for (;;) {
        const [deleted] = await conn.query<ResultSetHeader>({
          sql: `DELETE FROM ticketd_claims WHERE sequence = ? AND stripe_increment = ? AND stripe_residue = ? AND ticket <= ? LIMIT ${PRUNE_DELETE_BATCH}`,
          values: [...cls, String(floor)],
          timeout,
        });
        if (deleted.affectedRows < PRUNE_DELETE_BATCH) break;
      }
      await conn.query({
        sql: 'DELETE FROM ticketd_claim_floors WHERE sequence = ? AND stripe_increment = ? AND stripe_residue = ? AND floor_ticket < ?',
        values: [...cls, String(floor)],
        timeout,
      });
      return floor;
    });
  }

  /** All sequence rows on this backend. */
  async readSequences(): Promise<SequenceSettings[]> {
    return this.#selectSequences(undefined);
  }

  /** One sequence row, or undefined when this backend lacks the sequence. */
  async readSequence(name: string): Promise<SequenceSettings | undefined> {
    return (await this.#selectSequences(name))[0];
  }

  /** Sequence rows with their keys; a backend whose schema predates keys has ordered sequences only. */
  async #selectSequences(name: string | undefined): Promise<SequenceSettings[]> {
    const where = name === undefined ? '' : ' WHERE s.name = ?';
    const values = name === undefined ? [] : [name];
    const columns = 's.name, s.block_size, s.start_after, s.max_id';
    try {
      const [rows] = await this.withConnection((conn) =>
        conn.query<RowDataPacket[]>({
          sql: `SELECT ${columns}, k.scheme, k.id_key FROM ticketd_sequences s LEFT JOIN ticketd_sequence_keys k ON k.name = s.name${where} ORDER BY s.name`,
          values,
          timeout: this.#options.queryTimeoutMs,
        }),
      );
      return rows.map((row) => rowToSettings(row, this.label));
    } catch (error) {
      if (errnoOf(error) !== ER_NO_SUCH_TABLE) throw error;
      const [rows] = await this.withConnection((conn) =>
        conn.query<RowDataPacket[]>({ sql: `SELECT ${columns} FROM ticketd_sequences s${where} ORDER BY s.name`, values, timeout: this.#options.queryTimeoutMs }),
      );
      return rows.map((row) => rowToSettings(row, this.label));
    }
  }

  /**
   * Creates the sequence here: ticket table, counter advanced to its first useful ticket, then the
   * row. Returns false when an identical sequence already exists; throws on a conflicting one.
   */
  async createSequence(settings: SequenceSettings, firstTicket: bigint): Promise<boolean> {
    const existing = await this.readSequence(settings.name);
    if (existing !== undefined) {
      this.#assertSame(existing, settings);
      return false;
    }
    await this.prepareSequence(settings.name, firstTicket);
    try {
      await this.#withAdminConnection(async (conn) => {
        // The key and the row in one transaction: an opaque sequence is never seen without its key.
        await conn.beginTransaction();
        try {
          if (settings.ids === 'opaque') {
            if (settings.key === undefined) throw new Error(`opaque sequence ${settings.name} reached ${this.label} without a key`);
            await conn.query('INSERT INTO ticketd_sequence_keys (name, scheme, id_key) VALUES (?, ?, ?)', [settings.name, PERMUTATION_SCHEME, Buffer.from(settings.key)]);
          }
          await conn.query('INSERT INTO ticketd_sequences (name, block_size, start_after, max_id) VALUES (?, ?, ?, ?)', [
            settings.name,
            String(settings.blockSize),
            String(settings.startAfter),
            String(settings.maxId),
          ]);
          await conn.commit();
        } catch (error) {
          await conn.rollback().catch(() => undefined);
          throw error;
        }
      });
      return true;
    } catch (error) {
      if ((error as { errno?: number }).errno !== ER_DUP_ENTRY) throw error;
      // Another process created it between our read and insert.
      const raced = await this.readSequence(settings.name);
      if (raced === undefined) throw error;
      this.#assertSame(raced, settings);
      return false;
    }
  }

  /**
   * Creates the ticket table and advances its counter to firstTicket. Until the sequence row
   * exists nothing takes tickets from it, so a migration can stop here and leave no trace but a gap.
   */
  async prepareSequence(name: string, firstTicket: bigint): Promise<void> {
    await this.#withAdminConnection(async (conn) => {
      await conn.query({ sql: createTicketTableStatement(name), timeout: this.#options.ddlTimeoutMs });
      await this.#advance(conn, ticketTable(name), firstTicket);
    });
  }

  #assertSame(existing: SequenceSettings, wanted: SequenceSettings): void {
    if (!sameSettings(existing, wanted)) {
      throw new SequenceConflictError(`sequence ${wanted.name} exists on ${this.label} with ${onlyKeyDiffers(existing, wanted) ? 'another key' : describeSettings(existing)}`);
    }
  }

  /** Advances the sequence's counter so the next ticket is ≥ minTicket. Never lowers it. */
  async advanceCounter(sequence: string, minTicket: bigint): Promise<void> {
    await this.#withAdminConnection((conn) => this.#advance(conn, ticketTable(sequence), minTicket));
  }

  async #advance(conn: PoolConnection, table: string, minTicket: bigint): Promise<void> {
    // MySQL ignores an AUTO_INCREMENT below the current maximum, so this can only move forward.
    if (minTicket > 1n) await conn.query({ sql: `ALTER TABLE ${table} AUTO_INCREMENT = ${minTicket.toString()}`, timeout: this.#options.ddlTimeoutMs });
  }

  /** The last ticket this backend issued for the sequence (0 when none). */
  async lastTicket(sequence: string): Promise<bigint> {
    const [rows] = await this.withConnection((conn) =>
      conn.query<RowDataPacket[]>({
        sql: `SELECT MAX(id) AS id FROM ${ticketTable(sequence)}`,
        timeout: this.#options.queryTimeoutMs,
      }),
    );
    const id = rows[0]?.id;
    return id === null || id === undefined ? 0n : BigInt(String(id));
  }

  /** The lowest ticket the counter can issue next: AUTO_INCREMENT, and at least the last ticket + 1. */
  async nextTicket(sequence: string): Promise<bigint> {
    const table = ticketTable(sequence);
    const [results] = await this.withConnection((conn) =>
      conn.query<RowDataPacket[][]>({
        // SHOW CREATE TABLE reads the live counter; information_schema.TABLES is cached on MySQL 8.
        sql: `SELECT MAX(id) AS id FROM ${table}; SHOW CREATE TABLE ${table}`,
        timeout: this.#options.queryTimeoutMs,
      }),
    );
    const last = results[0]?.[0]?.id;
    const text = String(results[1]?.[0]?.['Create Table'] ?? '');
    // No AUTO_INCREMENT= clause: the counter has never moved, so the next value is 1.
    const autoIncrement = BigInt(/\) .*AUTO_INCREMENT=(\d+)/s.exec(text)?.[1] ?? '1');
    const afterLast = last === null || last === undefined ? 1n : BigInt(String(last)) + 1n;
    return autoIncrement > afterLast ? autoIncrement : afterLast;
  }

  /** Closes every connection. */
  async close(): Promise<void> {
    await this.#pool.end().catch(() => undefined);
    if (this.#adminPool !== this.#pool) await this.#adminPool.end().catch(() => undefined);
  }
}

function createPool(address: BackendAddress, options: BackendOptions, size: number): Pool {
  return mysql.createPool({
    host: address.host,
    port: address.port,
    user: address.user,
    password: address.password,
    database: address.database,
    connectTimeout: options.connectTimeoutMs,
    connectionLimit: size,
    maxIdle: size,
    // A claim and the floor read after it go in one round trip. Every value is bound and every
    // identifier checked against the sequence name pattern, so no input can add a statement.
    multipleStatements: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    enableKeepAlive: true,
  });
}

function toClassClaims(row: RowDataPacket): ClassClaims {
  const value = (v: unknown): bigint | undefined => (v === null || v === undefined ? undefined : BigInt(String(v)));
  return { increment: BigInt(String(row.inc)), residue: BigInt(String(row.residue)), highest: value(row.highest), floor: value(row.floor) };
}

function errnoOf(error: unknown): number | undefined {
  const errno = (error as { errno?: unknown } | null)?.errno;
  return typeof errno === 'number' ? errno : undefined;
}

function rowToSettings(row: RowDataPacket, label: string): SequenceSettings {
  const settings: SequenceSettings = Object.freeze({
    name: String(row.name),
    blockSize: BigInt(String(row.block_size)),
    startAfter: BigInt(String(row.start_after)),
    maxId: BigInt(String(row.max_id)),
    ids: row.id_key === null || row.id_key === undefined ? 'ordered' : 'opaque',
  });
  if (settings.ids === 'ordered') return settings;
  // A key written by a later ticketd under another scheme must not be read as this one's.
  if (row.scheme !== PERMUTATION_SCHEME) {
    throw new SequenceConflictError(`sequence ${settings.name} on ${label} uses ID scheme ${String(row.scheme)}, which this ticketd does not know; upgrade ticketd`);
  }
  return withKey(settings, new Uint8Array(row.id_key as Buffer));
}
