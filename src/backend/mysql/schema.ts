/** The schema of sql/schema.sql and the ticket tables: SQL text built from validated names only. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RowDataPacket } from 'mysql2/promise';
import { assertSequenceName } from '../../core/sequence.js';
import { SQL_DIR } from '../../paths.js';
import { BACKEND_NEEDS_VERSION, laterVersion } from '../../core/versions.js';
import { readIdentity, readNeedsVersion, type Db } from './pool.js';

/** The quoted ticket table of a sequence. The name is checked against the pattern first. */
export function ticketTable(sequence: string): string {
  assertSequenceName(sequence);
  return `\`tickets_${sequence}\``;
}

/** The statements of sql/schema.sql, in order. */
export function schemaStatements(): string[] {
  return splitStatements(readFileSync(join(SQL_DIR, 'schema.sql'), 'utf8'));
}

/** The tables sql/schema.sql creates: the one list of them. */
export function schemaTables(): string[] {
  return schemaStatements().flatMap((s) => /^CREATE TABLE IF NOT EXISTS (\w+)/i.exec(s)?.[1] ?? []);
}

/** CREATE TABLE IF NOT EXISTS for a sequence's ticket table, from sql/ticket-table.sql. */
export function createTicketTableStatement(sequence: string): string {
  const template = splitStatements(readFileSync(join(SQL_DIR, 'ticket-table.sql'), 'utf8'));
  if (template.length !== 1 || template[0] === undefined)
    throw new Error('sql/ticket-table.sql must hold one statement');
  return template[0].replaceAll('{{table}}', ticketTable(sequence));
}

/**
 * Applies sql/schema.sql, writes this backend's identity if it has none, and raises the version it
 * needs to this one's (never lowers it: a later ticketd's init may have raised it further). Idempotent.
 */
export function applySchema(db: Db): Promise<string> {
  return db.withAdminConnection(async (conn) => {
    for (const statement of schemaStatements()) await conn.query({ sql: statement, timeout: db.options.ddlTimeoutMs });
    await conn.query('INSERT IGNORE INTO ticketd_backend (singleton, backend_id) VALUES (1, UUID())');
    const held = await readNeedsVersion(conn, db.options.queryTimeoutMs);
    const needs = held === undefined ? BACKEND_NEEDS_VERSION : laterVersion(held, BACKEND_NEEDS_VERSION);
    if (needs !== held) {
      await conn.query(
        'INSERT INTO ticketd_schema (singleton, needs_version) VALUES (1, ?) ON DUPLICATE KEY UPDATE needs_version = VALUES(needs_version)',
        [needs],
      );
    }
    const identity = await readIdentity(conn, db.options.queryTimeoutMs);
    if (identity === undefined) throw new Error(`backend ${db.label} has no identity row after init`);
    return identity;
  });
}

/** Tables of sql/schema.sql that this backend lacks (an older schema, or init never ran). */
export async function missingSchemaTables(db: Db): Promise<string[]> {
  const wanted = schemaTables();
  const [rows] = await db.withConnection((conn) =>
    conn.query<RowDataPacket[]>({
      sql: 'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (?)',
      values: [wanted],
      timeout: db.options.queryTimeoutMs,
    }),
  );
  const present = new Set(rows.map((r) => String(r.name)));
  return wanted.filter((t) => !present.has(t));
}

/** Storage engine of every ticket table, by sequence name. */
export async function ticketTableEngines(db: Db): Promise<Map<string, string>> {
  const [rows] = await db.withConnection((conn) =>
    conn.query<RowDataPacket[]>({
      sql: "SELECT TABLE_NAME AS name, ENGINE AS engine FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'tickets\\_%'",
      timeout: db.options.queryTimeoutMs,
    }),
  );
  return new Map(rows.map((r) => [String(r.name).slice('tickets_'.length), String(r.engine)]));
}

function splitStatements(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
