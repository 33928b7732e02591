/**
 * Whether each account can do what each feature asks of it, proved by running the feature's own kind
 * of statement in a form that changes nothing: a REPLACE/INSERT of an empty SELECT, a DELETE or a
 * locking read matching no row, an ALTER of a table that does not exist (the privilege is checked
 * before the table is looked up: 1146 means granted, 1142 denied), a CREATE with a column twice
 * (1060 means granted: the server checks the privilege first and never makes the table).
 * Measured on MariaDB 10.11 and MySQL 9.7: none of them moves a counter or takes a ticket.
 */
import type { RowDataPacket } from 'mysql2/promise';
import type { PrivilegeProbe } from '../ticket-backend.js';
import type { Connection, Db } from './pool.js';

/** ER_DBACCESS_DENIED_ERROR, ER_TABLEACCESS_DENIED_ERROR, ER_COLUMNACCESS_DENIED_ERROR, ER_SPECIFIC_ACCESS_DENIED_ERROR. */
const DENIED = new Set([1044, 1142, 1143, 1227]);

/** One statement a feature needs, and the privileges it takes. */
interface Probe {
  readonly feature: PrivilegeProbe['feature'];
  readonly needs: string;
  readonly sql: string;
}

/** What the serving account runs. `ticketTable` is any ticket table (REPLACE takes INSERT and DELETE). */
function servingProbes(ticketTable: string | undefined): Probe[] {
  return [
    ...(ticketTable === undefined
      ? []
      : [
          {
            feature: 'issuing' as const,
            needs: 'INSERT and DELETE (REPLACE INTO the ticket tables)',
            sql: `REPLACE INTO \`${ticketTable}\` (stub) SELECT 'a' FROM DUAL WHERE 1 = 0`,
          },
        ]),
    {
      feature: 'issuing',
      needs: 'INSERT on ticketd_claims (claims)',
      sql: 'INSERT INTO ticketd_claims SELECT * FROM ticketd_claims WHERE 1 = 0',
    },
    {
      feature: 'issuing',
      needs: 'DELETE on ticketd_claims (pruning claims)',
      sql: 'DELETE FROM ticketd_claims WHERE 1 = 0',
    },
    {
      feature: 'issuing',
      needs: 'INSERT on ticketd_claim_floors',
      sql: 'INSERT INTO ticketd_claim_floors SELECT * FROM ticketd_claim_floors WHERE 1 = 0',
    },
    {
      feature: 'issuing',
      needs: 'DELETE on ticketd_claim_floors',
      sql: 'DELETE FROM ticketd_claim_floors WHERE 1 = 0',
    },
    {
      feature: 'worker leases',
      needs:
        'SELECT … FOR UPDATE on ticketd_worker_leases (MySQL: besides SELECT, one of UPDATE, DELETE or LOCK TABLES)',
      sql: 'SELECT pool FROM ticketd_worker_leases WHERE 1 = 0 FOR UPDATE',
    },
    {
      feature: 'worker leases',
      needs: 'INSERT and DELETE on ticketd_worker_leases (REPLACE)',
      sql: 'REPLACE INTO ticketd_worker_leases SELECT * FROM ticketd_worker_leases WHERE 1 = 0',
    },
    {
      feature: 'strict sequences',
      needs:
        'SELECT … FOR UPDATE on ticketd_strict_sequences (MySQL: besides SELECT, one of UPDATE, DELETE or LOCK TABLES)',
      sql: 'SELECT name FROM ticketd_strict_sequences WHERE 1 = 0 FOR UPDATE',
    },
    {
      feature: 'strict sequences',
      needs: 'INSERT and DELETE on ticketd_strict_sequences (REPLACE)',
      sql: 'REPLACE INTO ticketd_strict_sequences SELECT * FROM ticketd_strict_sequences WHERE 1 = 0',
    },
  ];
}

/** What the admin account (TICKETD_ADMIN_BACKENDS, or the serving one without it) runs. */
const ADMIN_PROBES: readonly Probe[] = [
  // Two columns of one name: refused (1060) after the privilege is checked, so no table is ever made.
  {
    feature: 'schema changes',
    needs: 'CREATE (init, creating sequences)',
    sql: 'CREATE TABLE ticketd_privilege_probe (probe INT, probe INT)',
  },
  {
    feature: 'schema changes',
    needs: 'ALTER (creating a sequence: its first ticket; gating and retiring; migrate)',
    sql: 'ALTER TABLE ticketd_privilege_probe AUTO_INCREMENT = 1',
  },
  {
    feature: 'schema changes',
    needs: 'UPDATE on ticketd_sequences (widening, retiring)',
    sql: 'UPDATE ticketd_sequences SET max_id = max_id WHERE 1 = 0',
  },
];

/** Runs every probe on both accounts; what fails for another reason than a denial is not reported here. */
export async function probePrivileges(
  db: Db,
  ticketTable: string | undefined,
  separateAdmin: boolean,
): Promise<PrivilegeProbe[]> {
  const found: PrivilegeProbe[] = [];
  const run = async (conn: Connection, account: PrivilegeProbe['account'], probes: readonly Probe[]): Promise<void> => {
    for (const probe of probes) {
      const denied = await deniedBy(conn, probe, db.options.queryTimeoutMs);
      if (denied !== undefined) found.push({ account, feature: probe.feature, needs: probe.needs, error: denied });
    }
  };
  await db.withConnection((conn) => run(conn, 'serving', servingProbes(ticketTable)));
  await db.withAdminConnection((conn) => run(conn, separateAdmin ? 'admin' : 'serving', ADMIN_PROBES));
  return found;
}

/**
 * What the serving account is refused now of what serving needs (the server's messages; empty when
 * nothing): asked again while a backend is shown refused, so that a GRANT shows within seconds.
 */
export async function servingDenials(db: Db, ticketTable: string | undefined): Promise<string[]> {
  return db.withConnection(async (conn) => {
    // A pooled connection keeps the database-level privileges it had at its last USE (MariaDB and
    // MySQL alike): without this a GRANT made since would not show here.
    const [[current]] = await conn.query<RowDataPacket[]>({
      sql: 'SELECT DATABASE() AS db',
      timeout: db.options.queryTimeoutMs,
    });
    if (typeof current?.db === 'string')
      await conn.query({ sql: `USE \`${current.db.replaceAll('`', '``')}\``, timeout: db.options.queryTimeoutMs });
    const denials: string[] = [];
    for (const probe of servingProbes(ticketTable)) {
      const denied = await deniedBy(conn, probe, db.options.queryTimeoutMs);
      if (denied !== undefined) denials.push(`${probe.needs}: ${denied}`);
    }
    return denials;
  });
}

async function deniedBy(conn: Connection, probe: Probe, timeout: number): Promise<string | undefined> {
  try {
    await conn.query({ sql: probe.sql, timeout });
    return undefined;
  } catch (error) {
    // Anything but a denial (the expected 1060 and 1146, a table an older schema lacks) proves no
    // privilege missing; check reports a missing table on its own.
    const errno = (error as { errno?: unknown }).errno;
    return typeof errno === 'number' && DENIED.has(errno) ? (error as Error).message : undefined;
  }
}
