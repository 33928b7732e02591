/**
 * `backends restore`: a dump is loaded into a staging database of its own, which no front end
 * touches, so the load can neither race a front end's REPLACE nor stop half-way through the live
 * tables. Only then is it merged into the live database, in moves that only ever add: a missing
 * table is created, a missing row inserted (a row the live table has is kept: it is the newer one),
 * and a ticket counter raised to the dump's when the dump's is higher (never lowered, invariant 5).
 * Each move is safe alone and the whole is idempotent, so a restore cut short is completed by
 * running it again, and the live backend is never worse than before it.
 */
import type { RowDataPacket, ResultSetHeader } from 'mysql2/promise';
import { RestoreRefusedError } from '../../core/errors.js';
import { errorText } from '../../util/error-text.js';
import type { RestoreReport } from '../ticket-backend.js';
import { restorableStatements } from './dump-statements.js';
import type { Connection, Db } from './pool.js';

/**
 * Tables merged before the rest: the claims that guard every used ticket and every reused range (so a
 * given-back range the dump brings back meets its claim), then what ends or gates a sequence.
 * Sequence rows go last.
 */
const MERGE_FIRST = [
  'ticketd_claims',
  'ticketd_claim_floors',
  'ticketd_range_claims',
  'ticketd_marks',
  'ticketd_retired_sequences',
  'ticketd_gated_sequences',
  'ticketd_sequence_keys',
];
const MERGE_LAST = ['ticketd_sequences'];
const TICKET_TABLE = /^tickets_[a-z][a-z0-9_]{0,47}$/;
const OWN_TABLE = /^ticketd_[a-z_]{1,56}$/;
/** The counter as SHOW CREATE TABLE has it: information_schema.TABLES is cached on MySQL 8 and later. */
const AUTO_INCREMENT = /\) .*AUTO_INCREMENT=(\d+)/s;

/** The staging database of a live one: the restore's alone (docs/operating.md grants it). */
export function stagingDatabase(live: string): string {
  return `${live}_restore`;
}

/**
 * Loads the dump into the staging database, merges it into the live one (the connection's own
 * database), and drops the staging database. A failure before the merge leaves the live database
 * untouched; one during it leaves only additions, which a repeat completes.
 */
export function restoreFromDump(db: Db, dump: string): Promise<Omit<RestoreReport, 'retiredAgain'>> {
  const { statements, leftOut } = restorableStatements(dump);
  return db.withAdminConnection(async (conn) => {
    const live = await currentDatabase(conn);
    const staging = stagingDatabase(live);
    const timeout = db.options.ddlTimeoutMs;
    // One restore of a backend at a time: a second would drop the first one's staging database.
    const [locked] = await conn.query<RowDataPacket[]>('SELECT GET_LOCK(?, 0) AS got', [`ticketd_restore:${live}`]);
    if (Number(locked[0]?.got) !== 1)
      throw new RestoreRefusedError(`another restore of ${db.label} is running; nothing changed`);
    await conn.query({ sql: `DROP DATABASE IF EXISTS ${quote(staging)}`, timeout });
    await conn.query({ sql: `CREATE DATABASE ${quote(staging)}`, timeout });
    try {
      await conn.query({ sql: `USE ${quote(staging)}`, timeout });
      await load(conn, statements, timeout);
      await conn.query({ sql: `USE ${quote(live)}`, timeout });
      const merged = await merge(conn, live, staging, timeout);
      return { ...merged, statements: statements.length, leftOut };
    } finally {
      // Best effort: on a broken connection these fail too, and the pool destroys it; the next restore drops the staging database first.
      await conn.query({ sql: `USE ${quote(live)}`, timeout }).catch(() => undefined);
      await conn.query({ sql: `DROP DATABASE IF EXISTS ${quote(staging)}`, timeout }).catch(() => undefined);
      await conn.query('SELECT RELEASE_LOCK(?)', [`ticketd_restore:${live}`]).catch(() => undefined);
    }
  });
}

async function load(conn: Connection, statements: readonly string[], timeout: number): Promise<void> {
  for (const [i, sql] of statements.entries()) {
    try {
      await conn.query({ sql, timeout });
    } catch (error) {
      const head = sql.length > 80 ? `${sql.slice(0, 80)}…` : sql;
      throw new RestoreRefusedError(
        `the dump's statement ${i + 1} of ${statements.length} failed in the staging database, so the live one is unchanged: ${errorText(error)} (${head})`,
        { cause: error },
      );
    }
  }
}

async function merge(
  conn: Connection,
  live: string,
  staging: string,
  timeout: number,
): Promise<Omit<RestoreReport, 'statements' | 'leftOut' | 'retiredAgain'>> {
  const restored = await tablesOf(conn, staging);
  const present = new Set(await tablesOf(conn, live));
  const foreign = restored.filter((t) => !TICKET_TABLE.test(t) && !OWN_TABLE.test(t));
  const tablesCreated: string[] = [];
  const create = async (table: string): Promise<void> => {
    if (present.has(table)) return;
    await conn.query({ sql: `CREATE TABLE ${quote(live, table)} LIKE ${quote(staging, table)}`, timeout });
    tablesCreated.push(table);
  };
  const countersRaised: RestoreReport['countersRaised'][number][] = [];
  for (const table of restored.filter((t) => TICKET_TABLE.test(t))) {
    await create(table);
    const dumped = await autoIncrement(conn, staging, table);
    const now = await autoIncrement(conn, live, table);
    if (dumped <= now) continue;
    // ALTER never lowers a counter (MySQL keeps it at or above the largest row), and rounds it up to the backend's class.
    await conn.query({ sql: `ALTER TABLE ${quote(live, table)} AUTO_INCREMENT = ${dumped}`, timeout });
    countersRaised.push({ sequence: table.slice('tickets_'.length), from: now, to: dumped });
  }
  const rest = restored.filter((t) => OWN_TABLE.test(t));
  const order = (t: string): number =>
    MERGE_FIRST.includes(t) ? MERGE_FIRST.indexOf(t) : MERGE_LAST.includes(t) ? 1000 : MERGE_FIRST.length;
  const rowsAdded: RestoreReport['rowsAdded'][number][] = [];
  for (const table of [...rest].sort((a, b) => order(a) - order(b) || a.localeCompare(b))) {
    await create(table);
    const columns = await sharedColumns(conn, live, staging, table);
    if (columns.length === 0) continue;
    const list = columns.map((c) => quote(c)).join(', ');
    // IGNORE: a row the live table holds under the same key is the newer one and stays as it is.
    const [result] = await conn.query<ResultSetHeader>({
      sql: `INSERT IGNORE INTO ${quote(live, table)} (${list}) SELECT ${list} FROM ${quote(staging, table)}`,
      timeout,
    });
    if (result.affectedRows > 0) rowsAdded.push({ table, rows: result.affectedRows });
  }
  return { tablesCreated, countersRaised, rowsAdded, tablesLeftOut: foreign };
}

async function currentDatabase(conn: Connection): Promise<string> {
  const [rows] = await conn.query<RowDataPacket[]>('SELECT DATABASE() AS db');
  const name = rows[0]?.db as unknown;
  if (typeof name !== 'string' || name === '') throw new RestoreRefusedError('the backend URL names no database');
  return name;
}

async function tablesOf(conn: Connection, database: string): Promise<string[]> {
  const [rows] = await conn.query<RowDataPacket[]>(
    "SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
    [database],
  );
  return rows.map((r) => String(r.name));
}

async function sharedColumns(conn: Connection, live: string, staging: string, table: string): Promise<string[]> {
  const [rows] = await conn.query<RowDataPacket[]>(
    'SELECT s.COLUMN_NAME AS name FROM information_schema.COLUMNS s JOIN information_schema.COLUMNS l ' +
      'ON l.TABLE_SCHEMA = ? AND l.TABLE_NAME = s.TABLE_NAME AND l.COLUMN_NAME = s.COLUMN_NAME ' +
      'WHERE s.TABLE_SCHEMA = ? AND s.TABLE_NAME = ? ORDER BY s.ORDINAL_POSITION',
    [live, staging, table],
  );
  return rows.map((r) => String(r.name));
}

/** The table's next AUTO_INCREMENT value, read where it is current. */
async function autoIncrement(conn: Connection, database: string, table: string): Promise<bigint> {
  const [rows] = await conn.query<RowDataPacket[]>(`SHOW CREATE TABLE ${quote(database, table)}`);
  const text = String(rows[0]?.['Create Table'] ?? '');
  // No AUTO_INCREMENT= clause: the counter has never moved, so the next value is 1.
  return BigInt(AUTO_INCREMENT.exec(text)?.[1] ?? '1');
}

/** Backtick-quoted identifiers, joined with dots. */
function quote(...names: string[]): string {
  return names.map((n) => `\`${n.replaceAll('`', '``')}\``).join('.');
}
