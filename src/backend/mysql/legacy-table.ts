/**
 * Reads a legacy table through a read-only session: its ID column, MAX(id), AUTO_INCREMENT and,
 * where a timestamp column shows it, how fast its IDs grow. Only `alterLegacy` writes (`migrate
 * apply --alter`, on a read-write connection).
 */
import mysql from 'mysql2/promise';
import type { Connection, RowDataPacket } from 'mysql2/promise';
import { MigrationRefusedError } from '../../core/errors.js';
import type { BackendAddress } from '../backend-address.js';
import { maxValueOfColumn } from './column-types.js';
import { mysqlSsl, plaintextAllowed } from '../backend-tls.js';
import { tlsError } from './errors.js';

/** A connection to the legacy database. */
export type LegacyConnection = Connection;

/** Rows the growth rate is measured over: the latest ones by ID. */
export const GROWTH_WINDOW_ROWS = 10_000;
/** Each statement against the legacy database gives up after this long. */
export const LEGACY_QUERY_TIMEOUT_MS = 30_000;

/** How fast IDs grew over the latest rows. */
export interface Growth {
  readonly idsPerSecond: number;
  readonly rows: number;
  readonly from: string;
  readonly to: string;
}

/** What the legacy table shows about its IDs. */
export interface LegacyTable {
  readonly name: string;
  readonly column: string;
  /** e.g. `int(11)`, `int(10) unsigned`, `bigint(20)`. */
  readonly columnType: string;
  readonly maxId: bigint;
  readonly nullable: boolean;
  readonly comment: string;
  readonly hasAutoIncrement: boolean;
  /** MAX(column), 0 for an empty table. */
  readonly maxExisting: bigint;
  /** The value the next insert without an ID would get, when the table has AUTO_INCREMENT. */
  readonly autoIncrement: bigint | undefined;
  readonly otherColumns: readonly string[];
  readonly timestampColumn: string | undefined;
  readonly growth: Growth | undefined;
}

/** Which table and columns to read. */
export interface LegacyTarget {
  readonly table: string;
  /** Default: the table's AUTO_INCREMENT column, else its one-column primary key. */
  readonly column?: string | undefined;
  /** Default: the first DATETIME or TIMESTAMP column, preferring one named like created. */
  readonly timestampColumn?: string | undefined;
}

/** Quotes a MySQL identifier: backticks doubled, so no name can end the quote. */
export function quoteIdentifier(name: string): string {
  return `\`${name.replace(/`/g, '``')}\``;
}

/** A connection to the legacy database whose session refuses writes. */
export async function connectReadOnly(source: BackendAddress): Promise<Connection> {
  const conn = await connectLegacy(source);
  await conn.query('SET SESSION TRANSACTION READ ONLY');
  return conn;
}

/** A connection to the legacy database (read-write: only `apply --alter` uses one), with the TLS its URL asks for. */
export async function connectLegacy(source: BackendAddress): Promise<Connection> {
  const ssl = mysqlSsl(source.tls);
  const open = (withTls: boolean): Promise<Connection> =>
    mysql.createConnection({
      host: source.host,
      port: source.port,
      user: source.user,
      password: source.password,
      database: source.database,
      connectTimeout: 5000,
      supportBigNumbers: true,
      bigNumberStrings: true,
      ...(withTls && ssl !== undefined && { ssl }),
    });
  try {
    return await open(true);
  } catch (error) {
    if (plaintextAllowed(error, source.tls)) return open(false);
    throw tlsError(error, source);
  }
}

/** Runs the plan's ALTER on the legacy table (read-write connection only); no timeout: it may copy a large table. */
export async function alterLegacy(conn: LegacyConnection, statement: string): Promise<void> {
  await conn.query(statement);
}

/** Reads the table; throws MigrationRefusedError when it or its ID column is not usable. */
export async function readLegacyTable(conn: Connection, target: LegacyTarget): Promise<LegacyTable> {
  const columns = await query(
    conn,
    'SELECT COLUMN_NAME AS name, DATA_TYPE AS dataType, COLUMN_TYPE AS columnType, IS_NULLABLE AS nullable, EXTRA AS extra, COLUMN_KEY AS columnKey, COLUMN_COMMENT AS comment ' +
      'FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION',
    [target.table],
  );
  if (columns.length === 0) throw new MigrationRefusedError(`--table: no table ${target.table} in the source database`);
  const isAuto = (c: RowDataPacket): boolean => /auto_increment/i.test(String(c.extra));
  // After `apply --alter` the column has no AUTO_INCREMENT left; a one-column primary key is it.
  const primary = columns.filter((c) => c.columnKey === 'PRI');
  const idColumn =
    target.column === undefined
      ? (columns.find(isAuto) ?? (primary.length === 1 ? primary[0] : undefined))
      : columns.find((c) => c.name === target.column);
  if (idColumn === undefined) {
    throw new MigrationRefusedError(
      target.column === undefined
        ? `--column: ${target.table} has neither an AUTO_INCREMENT column nor a one-column primary key; name the ID column`
        : `--column: ${target.table} has no column ${target.column}`,
    );
  }
  const column = String(idColumn.name);
  const columnType = String(idColumn.columnType);
  const maxId = maxValueOfColumn(String(idColumn.dataType), /unsigned/i.test(columnType));
  if (maxId === undefined)
    throw new MigrationRefusedError(`--column: ${target.table}.${column} is ${columnType}, not an integer column`);
  const hasAutoIncrement = isAuto(idColumn);
  const timestampColumn = pickTimestampColumn(columns, target.timestampColumn);
  return {
    name: target.table,
    column,
    columnType,
    maxId,
    nullable: idColumn.nullable === 'YES',
    comment: String(idColumn.comment ?? ''),
    hasAutoIncrement,
    ...(await readLegacyHigh(conn, { name: target.table, column, hasAutoIncrement })),
    otherColumns: columns.filter((c) => c !== idColumn).map((c) => String(c.name)),
    timestampColumn,
    growth:
      timestampColumn === undefined
        ? undefined
        : await readGrowth(
            conn,
            quoteIdentifier(target.table),
            quoteIdentifier(column),
            quoteIdentifier(timestampColumn),
          ),
  };
}

/** MAX(column) and AUTO_INCREMENT, re-read just before apply commits. */
export async function readLegacyHigh(
  conn: Connection,
  table: Pick<LegacyTable, 'name' | 'column' | 'hasAutoIncrement'>,
): Promise<{ maxExisting: bigint; autoIncrement: bigint | undefined }> {
  const [top] = await query(
    conn,
    `SELECT MAX(${quoteIdentifier(table.column)}) AS top FROM ${quoteIdentifier(table.name)}`,
  );
  // Negative IDs in a signed column are below any startAfter: an empty or all-negative table counts as 0.
  const max = top?.top === null || top?.top === undefined ? 0n : BigInt(String(top.top));
  const maxExisting = max > 0n ? max : 0n;
  return { maxExisting, autoIncrement: table.hasAutoIncrement ? await readAutoIncrement(conn, table.name) : undefined };
}

/** The highest ID at or below `bound` (0 when none is above 0): what the legacy table holds in a sequence's range. */
export async function readHighestUpTo(
  conn: Connection,
  table: Pick<LegacyTable, 'name' | 'column'>,
  bound: bigint,
): Promise<bigint> {
  const id = quoteIdentifier(table.column);
  // A decimal string compared with the column: exact on MariaDB and MySQL at any size.
  const [top] = await query(conn, `SELECT MAX(${id}) AS top FROM ${quoteIdentifier(table.name)} WHERE ${id} <= ?`, [
    String(bound),
  ]);
  const max = top?.top === null || top?.top === undefined ? 0n : BigInt(String(top.top));
  return max > 0n ? max : 0n;
}

/** One ID of the legacy table and how many rows hold it (more than one only without a unique key). */
export interface IdCount {
  readonly id: bigint;
  readonly rows: number;
}

/**
 * Legacy IDs above `after`, with their row counts, in ascending pages of `limit`: keyset
 * pagination on the ID column's index (AUTO_INCREMENT needs one), so each page costs its own rows.
 */
export async function readIdCountsAbove(
  conn: Connection,
  table: Pick<LegacyTable, 'name' | 'column'>,
  after: bigint,
  limit: number,
): Promise<IdCount[]> {
  const id = quoteIdentifier(table.column);
  const rows = await query(
    conn,
    `SELECT ${id} AS id, COUNT(*) AS n FROM ${quoteIdentifier(table.name)} WHERE ${id} > ? GROUP BY ${id} ORDER BY ${id} LIMIT ${Math.trunc(limit)}`,
    [String(after)],
  );
  return rows.map((r) => ({ id: BigInt(String(r.id)), rows: Number(r.n) }));
}

/** Legacy IDs above `after`, in ascending pages of `limit`. */
export async function readIdsAbove(
  conn: Connection,
  table: LegacyTable,
  after: bigint,
  limit: number,
): Promise<bigint[]> {
  const id = quoteIdentifier(table.column);
  const rows = await query(
    conn,
    `SELECT ${id} AS id FROM ${quoteIdentifier(table.name)} WHERE ${id} > ? ORDER BY ${id} LIMIT ${Math.trunc(limit)}`,
    [String(after)],
  );
  return rows.map((r) => BigInt(String(r.id)));
}

async function readAutoIncrement(conn: Connection, table: string): Promise<bigint | undefined> {
  // SHOW CREATE TABLE reads the live counter; information_schema.TABLES is cached on MySQL 8.
  const [row] = await query(conn, `SHOW CREATE TABLE ${quoteIdentifier(table)}`);
  const text = String(row?.['Create Table'] ?? '');
  const match = /\) .*AUTO_INCREMENT=(\d+)/s.exec(text);
  // No AUTO_INCREMENT= clause: the counter has never moved, so the next value is 1.
  return match === null ? 1n : BigInt(match[1]!);
}

function pickTimestampColumn(columns: RowDataPacket[], wanted: string | undefined): string | undefined {
  if (wanted !== undefined) {
    const found = columns.find((c) => c.name === wanted);
    if (found === undefined || !['datetime', 'timestamp'].includes(String(found.dataType).toLowerCase())) {
      throw new MigrationRefusedError(`--timestamp-column: ${wanted} is not a DATETIME or TIMESTAMP column`);
    }
    return wanted;
  }
  const stamps = columns.filter((c) => ['datetime', 'timestamp'].includes(String(c.dataType).toLowerCase()));
  return String((stamps.find((c) => /creat/i.test(String(c.name))) ?? stamps[0])?.name ?? '') || undefined;
}

async function readGrowth(conn: Connection, table: string, id: string, stamp: string): Promise<Growth | undefined> {
  const [row] = await query(
    conn,
    `SELECT COUNT(*) AS n, MIN(i) AS lo, MAX(i) AS hi, MIN(t) AS t0, MAX(t) AS t1, TIMESTAMPDIFF(MICROSECOND, MIN(t), MAX(t)) AS micros ` +
      `FROM (SELECT ${id} AS i, ${stamp} AS t FROM ${table} WHERE ${stamp} IS NOT NULL ORDER BY ${id} DESC LIMIT ${GROWTH_WINDOW_ROWS}) latest`,
  );
  if (row === undefined || row.micros === null || Number(row.micros) <= 0 || Number(row.n) < 2) return undefined;
  const span = Number(BigInt(String(row.hi)) - BigInt(String(row.lo)));
  return {
    idsPerSecond: span / (Number(row.micros) / 1e6),
    rows: Number(row.n),
    from: formatStamp(row.t0),
    to: formatStamp(row.t1),
  };
}

function formatStamp(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value);
}

async function query(conn: Connection, sql: string, values: unknown[] = []): Promise<RowDataPacket[]> {
  const [rows] = await conn.query<RowDataPacket[]>({ sql, values, timeout: LEGACY_QUERY_TIMEOUT_MS });
  return rows;
}
