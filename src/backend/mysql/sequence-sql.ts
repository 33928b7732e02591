/** Sequence rows and opaque sequences' keys. */
import type { RowDataPacket } from 'mysql2/promise';
import { isPermutationScheme } from 'ticketd-client';
import { conflictOf, withKey, type SequenceSettings } from '../../core/sequence.js';
import { SequenceConflictError } from '../../errors.js';
import { isDuplicateKey, isNoSuchTable } from './errors.js';
import type { Db } from './pool.js';
import type { TicketSql } from './ticket-sql.js';

const COLUMNS = 's.name, s.block_size, s.start_after, s.max_id';

/** Sequence rows (one, or all) with their keys; a backend whose schema predates keys has ordered sequences only. */
export async function readSequences(db: Db, name?: string): Promise<SequenceSettings[]> {
  const where = name === undefined ? '' : ' WHERE s.name = ?';
  const values = name === undefined ? [] : [name];
  const timeout = db.options.queryTimeoutMs;
  try {
    const [rows] = await db.withConnection((conn) =>
      conn.query<RowDataPacket[]>({
        sql: `SELECT ${COLUMNS}, k.scheme, k.id_key FROM ticketd_sequences s LEFT JOIN ticketd_sequence_keys k ON k.name = s.name${where} ORDER BY s.name`,
        values,
        timeout,
      }),
    );
    return rows.map((row) => rowToSettings(row, db.label));
  } catch (error) {
    if (!isNoSuchTable(error)) throw error;
    const [rows] = await db.withConnection((conn) => conn.query<RowDataPacket[]>({ sql: `SELECT ${COLUMNS} FROM ticketd_sequences s${where} ORDER BY s.name`, values, timeout }));
    return rows.map((row) => rowToSettings(row, db.label));
  }
}

/**
 * Creates the sequence: ticket table, counter advanced to its first useful ticket, then the row.
 * Returns false when an identical sequence already exists; throws on a conflicting one.
 */
export async function createSequence(db: Db, tickets: TicketSql, settings: SequenceSettings, firstTicket: bigint): Promise<boolean> {
  const existing = (await readSequences(db, settings.name))[0];
  if (existing !== undefined) {
    assertSame(db.label, existing, settings);
    return false;
  }
  await tickets.prepareSequence(settings.name, firstTicket);
  try {
    await db.withAdminConnection(async (conn) => {
      // The key and the row in one transaction: an opaque sequence is never seen without its key.
      await conn.beginTransaction();
      try {
        if (settings.ids === 'opaque') {
          if (settings.key === undefined || settings.scheme === undefined) throw new Error(`opaque sequence ${settings.name} reached ${db.label} without a key and scheme`);
          await conn.query('INSERT INTO ticketd_sequence_keys (name, scheme, id_key) VALUES (?, ?, ?)', [settings.name, settings.scheme, Buffer.from(settings.key)]);
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
    if (!isDuplicateKey(error)) throw error;
    // Another process created it between our read and insert.
    const raced = (await readSequences(db, settings.name))[0];
    if (raced === undefined) throw error;
    assertSame(db.label, raced, settings);
    return false;
  }
}

function assertSame(label: string, existing: SequenceSettings, wanted: SequenceSettings): void {
  const conflict = conflictOf(existing, wanted);
  if (conflict !== undefined) throw new SequenceConflictError(`sequence ${wanted.name} exists on ${label} with ${conflict}`);
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
  // A key written by a later ticketd under another scheme must not be read as one this one knows.
  if (!isPermutationScheme(row.scheme)) {
    throw new SequenceConflictError(`sequence ${settings.name} on ${label} uses ID scheme ${String(row.scheme)}, which this ticketd does not know; upgrade ticketd`);
  }
  return withKey(settings, new Uint8Array(row.id_key as Buffer), row.scheme);
}
