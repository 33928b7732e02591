/** Sequence rows, opaque sequences' keys, and gated sequences' settings (core/versions.ts). */
import type { ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { isPermutationScheme } from 'ticketd-client';
import { conflictOf, withKey, type SequenceSettings } from '../../core/sequence.js';
import {
  DECOY_SETTINGS,
  GATE_VERSION,
  gateFor,
  newerNeeded,
  RETIRE_VERSION,
  THIS_VERSION,
} from '../../core/versions.js';
import { SchemaOutdatedError, SequenceConflictError, UpgradeRequiredError } from '../../core/errors.js';
import { isDuplicateKey, isNoSuchTable } from './errors.js';
import type { Connection, Db } from './pool.js';
import type { TicketSql } from './ticket-sql.js';
import { readCeilingOn } from './ceiling-sql.js';

const COLUMNS = 's.name, s.block_size, s.start_after, s.max_id';
const KEYS = 'k.scheme, k.id_key';
const GATED =
  'g.block_size AS gated_block_size, g.start_after AS gated_start_after, g.max_id AS gated_max_id, g.needs_version';
const RETIRED = 'r.retired_at';
const STRICT = 't.name AS strict_name';
const REUSE = 'u.name AS reuse_name';

/**
 * Sequence rows (one, or all) with their keys and gated settings. A backend of an older schema
 * lacks the later tables: without ticketd_sequence_keys it holds ordered sequences only, and
 * without ticketd_gated_sequences none is gated yet.
 */
export async function readSequences(db: Db, name?: string): Promise<SequenceSettings[]> {
  const where = name === undefined ? '' : ' WHERE s.name = ?';
  const keys = ' LEFT JOIN ticketd_sequence_keys k ON k.name = s.name';
  const gated = ' LEFT JOIN ticketd_gated_sequences g ON g.name = s.name';
  const retired = ' LEFT JOIN ticketd_retired_sequences r ON r.name = s.name';
  const strict = ' LEFT JOIN ticketd_strict_sequences t ON t.name = s.name';
  const reuse = ' LEFT JOIN ticketd_reusing_sequences u ON u.name = s.name';
  const queries = [
    `SELECT ${COLUMNS}, ${KEYS}, ${GATED}, ${RETIRED}, ${STRICT}, ${REUSE} FROM ticketd_sequences s${keys}${gated}${retired}${strict}${reuse}${where} ORDER BY s.name`,
    `SELECT ${COLUMNS}, ${KEYS}, ${GATED}, ${RETIRED}, ${STRICT} FROM ticketd_sequences s${keys}${gated}${retired}${strict}${where} ORDER BY s.name`,
    `SELECT ${COLUMNS}, ${KEYS}, ${GATED}, ${RETIRED} FROM ticketd_sequences s${keys}${gated}${retired}${where} ORDER BY s.name`,
    `SELECT ${COLUMNS}, ${KEYS}, ${GATED} FROM ticketd_sequences s${keys}${gated}${where} ORDER BY s.name`,
    `SELECT ${COLUMNS}, ${KEYS} FROM ticketd_sequences s${keys}${where} ORDER BY s.name`,
    `SELECT ${COLUMNS} FROM ticketd_sequences s${where} ORDER BY s.name`,
  ];
  for (const [i, sql] of queries.entries()) {
    try {
      const [rows] = await db.withConnection((conn) =>
        conn.query<RowDataPacket[]>({
          sql,
          values: name === undefined ? [] : [name],
          timeout: db.options.queryTimeoutMs,
        }),
      );
      return rows.map((row) => rowToSettings(row, db.label));
    } catch (error) {
      if (!isNoSuchTable(error) || i === queries.length - 1) throw error;
    }
  }
  return [];
}

/**
 * Creates the sequence: ticket table, counter advanced to its first useful ticket, then the row.
 * Returns false when an identical sequence already exists; throws on a conflicting one.
 */
export async function createSequence(
  db: Db,
  tickets: TicketSql,
  settings: SequenceSettings,
  firstTicket: bigint,
): Promise<boolean> {
  const existing = (await readSequences(db, settings.name))[0];
  if (existing !== undefined) {
    const needs = newerNeeded(existing);
    // Its settings may hold what this version cannot compare (a later mode, another key): never touch it.
    if (needs !== undefined)
      throw new UpgradeRequiredError(
        `sequence ${settings.name} on ${db.label} needs ticketd ${needs} or later; this process is ${THIS_VERSION} and leaves it as it is`,
      );
    // A retired name never starts again from its first IDs: consumers keyed on (sequence, ID) would meet them twice.
    if (existing.retired === true)
      throw new SequenceConflictError(
        `sequence ${settings.name} was retired on ${db.label}; a retired name is never created again: choose another name`,
      );
    assertSame(db.label, existing, settings);
    return false;
  }
  await tickets.prepareSequence(settings.name, firstTicket);
  // A new gated sequence keeps its stub column: no older ticketd can have loaded it, and one that
  // loads it now reads the decoy and takes no ticket, so its breakers stay closed for the others.
  const needsVersion = gateFor(settings.ids);
  try {
    await db.withAdminConnection(async (conn) => {
      // Key, gated settings and row in one transaction: an opaque sequence is never seen without its
      // key, nor by an older ticketd with settings it could issue from.
      await conn.beginTransaction();
      try {
        if (settings.ids === 'opaque') {
          if (settings.key === undefined || settings.scheme === undefined)
            throw new Error(`opaque sequence ${settings.name} reached ${db.label} without a key and scheme`);
          await conn.query('INSERT INTO ticketd_sequence_keys (name, scheme, id_key) VALUES (?, ?, ?)', [
            settings.name,
            settings.scheme,
            Buffer.from(settings.key),
          ]);
        }
        if (settings.ids === 'strict') {
          // Its lease row, free, with the bound at startAfter: the first leader serves above it.
          await conn.query(
            "INSERT INTO ticketd_strict_sequences (name, epoch, leader, leader_url, expires_ms, bound) VALUES (?, 0, '', '', 0, ?)",
            [settings.name, String(settings.startAfter)],
          );
        }
        if (settings.reuse === true)
          await conn.query('INSERT INTO ticketd_reusing_sequences (name) VALUES (?)', [settings.name]);
        if (needsVersion !== undefined) await insertGated(conn, settings, needsVersion);
        await conn.query(
          'INSERT INTO ticketd_sequences (name, block_size, start_after, max_id) VALUES (?, ?, ?, ?)',
          rowValues(settings.name, needsVersion === undefined ? settings : DECOY_SETTINGS),
        );
        await conn.commit();
      } catch (error) {
        await conn.rollback().catch(() => undefined);
        throw error;
      }
    });
    return true;
  } catch (error) {
    if (isNoSuchTable(error))
      throw new SchemaOutdatedError(
        `backend ${db.label} has the schema of a ticketd older than ${GATE_VERSION}, which cannot keep sequence ${settings.name} from it; run npx ticketd init, then repeat`,
        { cause: error },
      );
    if (!isDuplicateKey(error)) throw error;
    // Another process created it between our read and insert.
    const raced = (await readSequences(db, settings.name))[0];
    if (raced === undefined) throw error;
    assertSame(db.label, raced, settings);
    return false;
  }
}

/**
 * Raises an ordered sequence's maxId. The WHERE clause only ever raises it: a repeat, or a process
 * racing with an older value, changes nothing. Gated sequences (opaque ones) are never widened
 * (core/widening.ts), so their row is never the one touched here. A ceiling (a migrated sequence's
 * legacy reserve above it) refuses a maxId past it, in the statement itself, so a ceiling recorded
 * between a read and the write still holds.
 */
export async function widenSequence(db: Db, name: string, maxId: bigint): Promise<boolean> {
  return db.withAdminConnection(async (conn) => {
    const ceiling = await readCeilingOn(conn, db, name);
    if (ceiling !== undefined && maxId > ceiling.ceiling)
      throw new SequenceConflictError(
        `sequence ${name} cannot be widened past ${ceiling.ceiling} on ${db.label}: ${ceiling.reason}`,
      );
    const [result] = await conn.query<ResultSetHeader>({
      sql:
        'UPDATE ticketd_sequences SET max_id = ? WHERE name = ? AND max_id < ? ' +
        'AND NOT EXISTS (SELECT 1 FROM ticketd_sequence_ceilings c WHERE c.name = ? AND c.ceiling < ?)',
      values: [String(maxId), name, String(maxId), name, String(maxId)],
      timeout: db.options.queryTimeoutMs,
    });
    return result.affectedRows > 0;
  });
}

/**
 * Retires the sequence on this backend, for good (core/versions.ts, RETIRE_VERSION): first its ticket
 * table stops taking tickets from any ticketd (TicketSql.retireTicketTable), then, in one transaction,
 * it is recorded retired and gated for this version, its row the decoy. Counter and claims stay.
 * Idempotent: a repeat completes what a failure left.
 */
export async function retireSequence(db: Db, tickets: TicketSql, settings: SequenceSettings): Promise<void> {
  await tickets.retireTicketTable(settings.name);
  await db.withAdminConnection(async (conn) => {
    await conn.beginTransaction();
    try {
      await conn.query('INSERT IGNORE INTO ticketd_retired_sequences (name) VALUES (?)', [settings.name]);
      await conn.query(
        'INSERT INTO ticketd_gated_sequences (name, block_size, start_after, max_id, needs_version) VALUES (?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE needs_version = VALUES(needs_version)',
        [...rowValues(settings.name, settings), RETIRE_VERSION],
      );
      await conn.query('UPDATE ticketd_sequences SET block_size = ?, start_after = ?, max_id = ? WHERE name = ?', [
        ...rowValues(settings.name, DECOY_SETTINGS).slice(1),
        settings.name,
      ]);
      await conn.commit();
    } catch (error) {
      await conn.rollback().catch(() => undefined);
      throw isNoSuchTable(error)
        ? new SchemaOutdatedError(
            `backend ${db.label} has no ticketd_retired_sequences (schema of a ticketd before ${RETIRE_VERSION}); run npx ticketd init, then repeat`,
            { cause: error },
          )
        : error;
    }
  });
}

function assertSame(label: string, existing: SequenceSettings, wanted: SequenceSettings): void {
  const conflict = conflictOf(existing, wanted);
  if (conflict !== undefined)
    throw new SequenceConflictError(`sequence ${wanted.name} exists on ${label} with ${conflict}`);
}

/**
 * Stores an ungated sequence gated (init, core/versions.ts): first its ticket table's stub column is
 * renamed, so a ticketd 0.5 or older that loaded it can take no more tickets; then its settings move
 * to ticketd_gated_sequences and its row becomes the decoy, in one transaction. Returns the names gated.
 */
export async function gateSequences(db: Db, tickets: TicketSql): Promise<string[]> {
  const gated: string[] = [];
  for (const settings of await readSequences(db)) {
    const needsVersion = gateFor(settings.ids);
    if (needsVersion === undefined || settings.needsVersion !== undefined) continue;
    await tickets.gateTicketTable(settings.name);
    await db.withAdminConnection(async (conn) => {
      await conn.beginTransaction();
      try {
        await insertGated(conn, settings, needsVersion);
        await conn.query('UPDATE ticketd_sequences SET block_size = ?, start_after = ?, max_id = ? WHERE name = ?', [
          ...rowValues(settings.name, DECOY_SETTINGS).slice(1),
          settings.name,
        ]);
        await conn.commit();
      } catch (error) {
        await conn.rollback().catch(() => undefined);
        throw error;
      }
    });
    gated.push(settings.name);
  }
  return gated;
}

async function insertGated(conn: Connection, settings: SequenceSettings, needsVersion: string): Promise<void> {
  await conn.query(
    'INSERT INTO ticketd_gated_sequences (name, block_size, start_after, max_id, needs_version) VALUES (?, ?, ?, ?, ?)',
    [...rowValues(settings.name, settings), needsVersion],
  );
}

function rowValues(
  name: string,
  s: { readonly blockSize: bigint; readonly startAfter: bigint; readonly maxId: bigint },
): string[] {
  return [name, String(s.blockSize), String(s.startAfter), String(s.maxId)];
}

function rowToSettings(row: RowDataPacket, label: string): SequenceSettings {
  const gated = row.gated_block_size !== null && row.gated_block_size !== undefined;
  const name = String(row.name);
  const settings: SequenceSettings = Object.freeze({
    name,
    blockSize: BigInt(String(gated ? row.gated_block_size : row.block_size)),
    startAfter: BigInt(String(gated ? row.gated_start_after : row.start_after)),
    maxId: BigInt(String(gated ? row.gated_max_id : row.max_id)),
    ids:
      row.id_key !== null && row.id_key !== undefined
        ? 'opaque'
        : row.strict_name !== null && row.strict_name !== undefined
          ? 'strict'
          : 'ordered',
    ...(gated ? { needsVersion: String(row.needs_version) } : {}),
    ...(row.retired_at !== null && row.retired_at !== undefined ? { retired: true } : {}),
    ...(row.reuse_name !== null && row.reuse_name !== undefined ? { reuse: true } : {}),
  });
  if (!gated && settings.maxId <= settings.startAfter) {
    throw new SequenceConflictError(
      `sequence ${name} on ${label} has only its decoy row (maxId ${settings.maxId}), not its settings in ticketd_gated_sequences; restore that table from the other backends`,
    );
  }
  // A later ticketd's sequence is refused by name and version when it is used (service), not misread here.
  if (settings.ids !== 'opaque' || newerNeeded(settings) !== undefined) return settings;
  // A key written by a later ticketd under another scheme must not be read as one this one knows.
  if (!isPermutationScheme(row.scheme)) {
    throw new SequenceConflictError(
      `sequence ${name} on ${label} uses ID scheme ${String(row.scheme)}, which this ticketd does not know; upgrade ticketd`,
    );
  }
  return withKey(settings, new Uint8Array(row.id_key as Buffer), row.scheme);
}
