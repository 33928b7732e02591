/**
 * Sequence ceilings (`ticketd_sequence_ceilings`): the largest maxId a sequence may ever be widened
 * to, recorded for a migrated sequence whose legacy table keeps AUTO_INCREMENT above it.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { SchemaOutdatedError } from '../../core/errors.js';
import type { SequenceCeiling } from '../ticket-backend.js';
import { isNoSuchTable } from './errors.js';
import type { Connection, Db } from './pool.js';

/**
 * Records the largest maxId the sequence may ever reach (a migrated one's legacy reserve starts
 * above it). A ceiling only comes down: a second record keeps the lower of the two.
 */
export async function recordCeiling(db: Db, name: string, ceiling: bigint, reason: string): Promise<void> {
  await db.withAdminConnection((conn) =>
    conn.query({
      // CAST: a string parameter would compare as a string on MySQL and as a double on MariaDB.
      sql:
        'INSERT INTO ticketd_sequence_ceilings (name, ceiling, reason) VALUES (?, ?, ?) ' +
        'ON DUPLICATE KEY UPDATE reason = IF(VALUES(ceiling) < ceiling, VALUES(reason), reason), ' +
        'ceiling = LEAST(ceiling, CAST(VALUES(ceiling) AS DECIMAL(20, 0)))',
      values: [name, String(ceiling), reason.slice(0, 255)],
      timeout: db.options.queryTimeoutMs,
    }),
  );
}

/** Lifts the sequence's ceiling (its legacy table no longer has AUTO_INCREMENT); true when there was one. */
export async function liftCeiling(db: Db, name: string): Promise<boolean> {
  const [result] = await db.withAdminConnection((conn) =>
    conn.query<ResultSetHeader>({
      sql: 'DELETE FROM ticketd_sequence_ceilings WHERE name = ?',
      values: [name],
      timeout: db.options.queryTimeoutMs,
    }),
  );
  return result.affectedRows > 0;
}

/** The sequence's ceiling on this backend, if one was recorded. */
export function readCeiling(db: Db, name: string): Promise<SequenceCeiling | undefined> {
  return db.withConnection((conn) => readCeilingOn(conn, db, name));
}

/** The ceiling on this connection's backend; refuses (schema outdated) where init has not added the table. */
export async function readCeilingOn(conn: Connection, db: Db, name: string): Promise<SequenceCeiling | undefined> {
  const [rows] = await conn
    .query<RowDataPacket[]>({
      sql: 'SELECT ceiling, reason FROM ticketd_sequence_ceilings WHERE name = ?',
      values: [name],
      timeout: db.options.queryTimeoutMs,
    })
    .catch((error: unknown) => {
      // Without the table no ceiling can be known, so nothing may be widened until init adds it.
      if (!isNoSuchTable(error)) throw error;
      throw new SchemaOutdatedError(
        `backend ${db.label} has no ticketd_sequence_ceilings (schema of a ticketd before 0.12.0); run npx ticketd init, then repeat`,
        { cause: error },
      );
    });
  const row = rows[0];
  return row === undefined ? undefined : { ceiling: BigInt(String(row.ceiling)), reason: String(row.reason) };
}
