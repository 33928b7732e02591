/**
 * What makes a backend's counter go back, done for real: an async replica of backend A (with a
 * replication delay) promoted behind A's address, and a logical backup of A restored while ticketd
 * runs. Servers come from the project's launcher, on loopback ports, in a temp directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql, { type RowDataPacket } from 'mysql2/promise';
import { Allocator } from '../../src/allocator/allocator.js';
import { loadConfig } from '../../src/config/load-config.js';
import {
  backendOptionFile,
  findServerBinary,
  startLocalServer,
  type LocalServer,
} from '../../src/launcher/local-mysql.js';
import { silentLogger } from '../../src/logger.js';
import { initBackends } from '../../src/service/init.js';
import { TicketService } from '../../src/service/ticket-service.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

/** Backend A behind a proxy (its "virtual address"), a delayed replica of A, and backend B. */
export interface ReplicatedBackends {
  readonly a: LocalServer;
  readonly replica: LocalServer;
  readonly b: LocalServer;
  readonly proxy: TcpProxy;
  /** TICKETD_BACKENDS: A through the proxy, then B. */
  readonly backendsUrl: string;
  /** A's URL as ticketd names it (through the proxy), in logs and to the admin. */
  readonly aLabel: string;
  /** A's name, as metrics label it. */
  readonly aName: string;
  /**
   * Kills A, stops replication and moves A's address to the replica, as failover tooling does.
   * Returns the replica's last ticket of `sequence` at that moment (where A's counter now stands).
   */
  promote(sequence: string): Promise<bigint>;
  dispose(): Promise<void>;
}

/** Starts A (binary log on), its replica delayed by `delaySeconds`, and B; runs `init` through the proxy. */
export async function startReplicatedBackends(delaySeconds: number): Promise<ReplicatedBackends> {
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-replica-'));
  const binary = findServerBinary(process.env.TICKETD_MYSQLD, process.env.PATH);
  const binlog = (id: number) => [`--server-id=${id}`, '--log-bin=binlog', '--binlog-format=ROW'];
  const [a, replica, b] = await Promise.all([
    startLocalServer({
      name: 'a',
      optionFile: backendOptionFile('a'),
      dir: join(dir, 'a'),
      binary,
      extraArgs: binlog(1),
    }),
    // The replica runs A's option file: same residue class, as a real standby of A would.
    startLocalServer({
      name: 'replica',
      optionFile: backendOptionFile('a'),
      dir: join(dir, 'replica'),
      binary,
      extraArgs: [...binlog(2), '--relay-log=relay'],
    }),
    startLocalServer({ name: 'b', optionFile: backendOptionFile('b'), dir: join(dir, 'b'), binary }),
  ]);
  const mysqlFlavor = a.flavor === 'mysql';
  const [status] = await query(a.url, mysqlFlavor ? 'SHOW BINARY LOG STATUS' : 'SHOW MASTER STATUS');
  await run(
    replica.url,
    mysqlFlavor
      ? `CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=${a.port}, SOURCE_USER='root', SOURCE_PASSWORD='', SOURCE_LOG_FILE='${String(status!.File)}', SOURCE_LOG_POS=${Number(status!.Position)}, SOURCE_DELAY=${delaySeconds}`
      : `CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${a.port}, MASTER_USER='root', MASTER_PASSWORD='', MASTER_LOG_FILE='${String(status!.File)}', MASTER_LOG_POS=${Number(status!.Position)}, MASTER_DELAY=${delaySeconds}`,
    'START REPLICA',
  );
  const proxy = await startTcpProxy(a.port);
  const proxied = `mysql://root@127.0.0.1:${proxy.port}/ticketd`;
  const backendsUrl = `${proxied},${b.url}`;
  const allocator = new Allocator({ backends: loadConfig({ backends: backendsUrl }).backends, logger: silentLogger });
  const service = new TicketService({ allocator, logger: silentLogger });
  await initBackends(allocator, service).finally(() => service.close());
  return {
    a,
    replica,
    b,
    proxy,
    backendsUrl,
    aLabel: `mysql://127.0.0.1:${proxy.port}/ticketd`,
    aName: 'A',
    promote: async (sequence) => {
      a.signal('SIGKILL');
      await a.exited();
      await run(replica.url, 'STOP REPLICA', 'RESET REPLICA ALL');
      const [row] = await query(replica.url, `SELECT MAX(id) AS id FROM tickets_${sequence}`);
      proxy.retarget(replica.port);
      return BigInt(String(row?.id ?? 0));
    },
    dispose: async () => {
      await proxy.close();
      await Promise.all([a.stop(), replica.stop(), b.stop()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every table of a database: its CREATE statement (with AUTO_INCREMENT) and its rows. */
export type LogicalBackup = { readonly table: string; readonly create: string; readonly rows: RowDataPacket[] }[];

/** A logical backup of the server's ticketd database, as mysqldump would take it. */
export async function takeBackup(serverUrl: string): Promise<LogicalBackup> {
  const conn = await mysql.createConnection({
    uri: serverUrl,
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
  });
  try {
    const [tables] = await conn.query<RowDataPacket[]>('SHOW TABLES');
    const backup: LogicalBackup = [];
    for (const t of tables) {
      const table = String(Object.values(t)[0]);
      const [[create]] = (await conn.query<RowDataPacket[]>(`SHOW CREATE TABLE \`${table}\``)) as unknown as [
        RowDataPacket[],
      ];
      const [rows] = await conn.query<RowDataPacket[]>(`SELECT * FROM \`${table}\``);
      backup.push({ table, create: String(create!['Create Table']), rows });
    }
    return backup;
  } finally {
    await conn.end();
  }
}

/**
 * Restores a logical backup over the live database: each table rebuilt from the backup under
 * another name, then swapped in with one atomic RENAME, so that live traffic sees the old table
 * or the restored one, never a half-filled one.
 */
export async function restoreBackup(serverUrl: string, backup: LogicalBackup): Promise<void> {
  const conn = await mysql.createConnection({
    uri: serverUrl,
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
  });
  try {
    for (const { table, create, rows } of backup) {
      const staged = `${table}_restore`;
      await conn.query(`DROP TABLE IF EXISTS \`${staged}\``);
      await conn.query(create.replace(`CREATE TABLE \`${table}\``, `CREATE TABLE \`${staged}\``));
      if (rows.length > 0) {
        const columns = Object.keys(rows[0]!);
        await conn.query(`INSERT INTO \`${staged}\` (${columns.map((c) => `\`${c}\``).join(', ')}) VALUES ?`, [
          rows.map((r) => columns.map((c): unknown => r[c])),
        ]);
      }
      await conn.query(`RENAME TABLE \`${table}\` TO \`${table}_replaced\`, \`${staged}\` TO \`${table}\``);
      await conn.query(`DROP TABLE \`${table}_replaced\``);
    }
  } finally {
    await conn.end();
  }
}

async function query(url: string, sql: string): Promise<RowDataPacket[]> {
  const conn = await mysql.createConnection(url);
  try {
    return (await conn.query<RowDataPacket[]>(sql))[0];
  } finally {
    await conn.end();
  }
}

async function run(url: string, ...statements: string[]): Promise<void> {
  const conn = await mysql.createConnection(url);
  try {
    for (const statement of statements) await conn.query(statement);
  } finally {
    await conn.end();
  }
}
