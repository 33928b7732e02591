/** The connection pools of one backend: every connection is checked by the guard before its first use. */
import mysql from 'mysql2/promise';
import type { Pool, PoolConnection, RowDataPacket } from 'mysql2/promise';
import type { ServerSettings } from '../../core/stripes.js';
import type { BackendAddress } from '../backend-address.js';
import { mysqlSsl, plaintextAllowed, type MysqlSsl } from '../backend-tls.js';
import type { Transport } from '../ticket-backend.js';
import { accessError, isLoginDenied, isNoSuchTable, plaintextRefused, tlsError } from './errors.js';
import type { BackendOptions } from '../backend-options.js';

/** A connection of the pool, as the SQL files use it. */
export type Connection = PoolConnection;

/** What the SQL files need: checked connections on the serving and the admin account. */
export interface Db {
  readonly label: string;
  readonly options: BackendOptions;
  /** Runs fn on a checked connection; a connection that saw an error is destroyed, not reused. */
  withConnection<T>(fn: (conn: Connection) => Promise<T>): Promise<T>;
  /** The same, on the admin account: CREATE, ALTER and the sequence rows. */
  withAdminConnection<T>(fn: (conn: Connection) => Promise<T>): Promise<T>;
}

/** The serving pool, and the admin pool (TICKETD_ADMIN_BACKENDS; the serving one without it). */
export class Pools implements Db {
  readonly label: string;
  readonly options: BackendOptions;
  readonly #pool: TlsPool;
  readonly #adminPool: TlsPool;
  readonly #guard: (settings: ServerSettings) => void;
  #verified = new WeakSet();
  #transport: Transport | undefined;

  constructor(
    address: BackendAddress,
    guard: (settings: ServerSettings) => void,
    options: BackendOptions,
    admin: BackendAddress | undefined,
  ) {
    this.label = address.label;
    this.options = options;
    this.#guard = guard;
    this.#pool = new TlsPool(address, options, options.poolSize);
    this.#adminPool = admin === undefined ? this.#pool : new TlsPool(admin, options, 1);
  }

  /** True when schema changes go through an account of their own (TICKETD_ADMIN_BACKENDS). */
  get separateAdmin(): boolean {
    return this.#adminPool !== this.#pool;
  }

  /** How the newest connection travels (TLS version and cipher, or plaintext); undefined before one. */
  get transport(): Transport | undefined {
    return this.#transport;
  }

  /** Reads the TLS files again: new connections use them, open ones go on. Throws (keeping the old ones) when one cannot be read. */
  reloadTls(): void {
    this.#pool.reloadTls();
    if (this.#adminPool !== this.#pool) this.#adminPool.reloadTls();
  }

  withConnection<T>(fn: (conn: Connection) => Promise<T>): Promise<T> {
    return this.#with(this.#pool, fn);
  }

  withAdminConnection<T>(fn: (conn: Connection) => Promise<T>): Promise<T> {
    return this.#with(this.#adminPool, fn);
  }

  /** The same connections as seen by `ticketd check`: read without the guard, which the check's findings replace. */
  unchecked(): Db {
    return {
      label: this.label,
      options: this.options,
      withConnection: (fn) => this.#with(this.#pool, fn, false),
      withAdminConnection: (fn) => this.#with(this.#adminPool, fn, false),
    };
  }

  async #with<T>(pool: TlsPool, fn: (conn: Connection) => Promise<T>, guarded = true): Promise<T> {
    const conn = await pool.getConnection();
    try {
      if (!this.#verified.has(conn.connection)) {
        this.#transport = transportOf(conn);
        if (guarded) {
          this.#guard(await this.readSession(conn));
          this.#verified.add(conn.connection);
        }
      }
      const result = await fn(conn);
      conn.release();
      return result;
    } catch (error) {
      conn.destroy();
      throw accessError(error, this.label);
    }
  }

  /** Checks the settings of every connection again before its next use (after an idle spell or a break). */
  forgetVerifiedConnections(): void {
    this.#verified = new WeakSet();
  }

  /** The session's stripe, the server's durability and topology, and what init wrote: identity and the version needed. */
  async readSession(conn: Connection): Promise<ServerSettings> {
    const timeout = this.options.queryTimeoutMs;
    const [rows] = await conn.query<RowDataPacket[]>({
      sql:
        'SELECT @@session.auto_increment_increment AS inc, @@session.auto_increment_offset AS off, ' +
        '@@global.innodb_flush_log_at_trx_commit AS flush, @@global.sync_binlog AS sync_binlog, @@global.log_bin AS log_bin',
      timeout,
    });
    const row = rows[0];
    if (row === undefined) throw new Error(`backend ${this.label} returned no session settings`);
    // Variables of one product only (wsrep_*, group_replication_*) are missing elsewhere; SHOW … WHERE works on all.
    const [variables] = await conn.query<RowDataPacket[]>({
      sql:
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('wsrep_on', 'wsrep_auto_increment_control', 'group_replication_group_name', " +
        "'group_replication_single_primary_mode', 'read_only', 'super_read_only', 'version')",
      timeout,
    });
    const value = (name: string): string | undefined => {
      const found: unknown = variables.find((r) => r.Variable_name === name)?.Value;
      // SHOW VARIABLES gives strings (bytes under a binary collation); NULL is unset.
      if (Buffer.isBuffer(found)) return found.toString('utf8');
      return typeof found === 'string' || typeof found === 'number' ? String(found) : undefined;
    };
    const on = (name: string): boolean => ['ON', '1'].includes((value(name) ?? '').toUpperCase());
    return {
      increment: BigInt(String(row.inc)),
      offset: BigInt(String(row.off)),
      flushLogAtTrxCommit: Number(row.flush),
      syncBinlog: Number(row.sync_binlog),
      logBin: Number(row.log_bin) === 1,
      galeraAutoIncrementControl: on('wsrep_on') && on('wsrep_auto_increment_control'),
      galera: on('wsrep_on'),
      groupReplication: await groupReplicationRole(
        conn,
        timeout,
        value('group_replication_group_name'),
        on('group_replication_single_primary_mode'),
      ),
      readOnly: on('read_only') || on('super_read_only'),
      tidb: /tidb/i.test(value('version') ?? ''),
      identity: await readIdentity(conn, timeout),
      needsVersion: await readNeedsVersion(conn, timeout),
    };
  }

  /** Closes every connection. */
  async close(): Promise<void> {
    await this.#pool.end().catch(() => undefined);
    if (this.#adminPool !== this.#pool) await this.#adminPool.end().catch(() => undefined);
  }
}

/** The identity `init` wrote (MariaDB has no @@server_uuid), or undefined before init. */
export function readIdentity(conn: Connection, timeout: number): Promise<string | undefined> {
  return readSingleton(conn, timeout, 'ticketd_backend', 'backend_id');
}

/** The oldest ticketd that may use this backend (core/versions.ts), or undefined before a 0.6 init. */
export function readNeedsVersion(conn: Connection, timeout: number): Promise<string | undefined> {
  return readSingleton(conn, timeout, 'ticketd_schema', 'needs_version');
}

/** A column of a one-row table init writes; undefined when the table or its row is not there yet. */
async function readSingleton(
  conn: Connection,
  timeout: number,
  table: 'ticketd_backend' | 'ticketd_schema',
  column: 'backend_id' | 'needs_version',
): Promise<string | undefined> {
  try {
    const [rows] = await conn.query<RowDataPacket[]>({
      sql: `SELECT ${column} AS value FROM ${table} WHERE singleton = 1`,
      timeout,
    });
    const value: unknown = rows[0]?.value;
    return typeof value === 'string' ? value : undefined;
  } catch (error) {
    if (isNoSuchTable(error)) return undefined;
    throw error;
  }
}

/**
 * This member's place in a running Group Replication group: undefined when the server is in none.
 * The member table is read only when a group is named (performance_schema may be off elsewhere).
 */
async function groupReplicationRole(
  conn: Connection,
  timeout: number,
  group: string | undefined,
  singlePrimary: boolean,
): Promise<'primary' | 'secondary' | 'multi-primary' | undefined> {
  if (group === undefined || group === '') return undefined;
  const [rows] = await conn.query<RowDataPacket[]>({
    sql: "SELECT MEMBER_ROLE AS role FROM performance_schema.replication_group_members WHERE MEMBER_ID = @@server_uuid AND MEMBER_STATE = 'ONLINE'",
    timeout,
  });
  const role: unknown = rows[0]?.role;
  if (role === undefined) return undefined;
  if (!singlePrimary) return 'multi-primary';
  return typeof role === 'string' && role.toUpperCase() === 'PRIMARY' ? 'primary' : 'secondary';
}

/**
 * A mysql2 pool with the backend's TLS settings. Under ssl-mode=PREFERRED a server that offers no
 * TLS is used in plaintext (as the mysql client does); every other mode refuses it. A handshake
 * refused is one line naming the backend and the setting (errors.ts, tlsError).
 */
class TlsPool {
  readonly #address: BackendAddress;
  readonly #options: BackendOptions;
  readonly #size: number;
  /** The object mysql2 was given: a reload changes its fields, and mysql2 builds new connections' contexts from them. */
  readonly #ssl: MysqlSsl | undefined;
  #pool: Pool;
  #plaintext = false;

  constructor(address: BackendAddress, options: BackendOptions, size: number) {
    this.#address = address;
    this.#options = options;
    this.#size = size;
    this.#ssl = mysqlSsl(address.tls);
    this.#pool = createPool(address, options, size, this.#ssl);
  }

  async getConnection(): Promise<PoolConnection> {
    try {
      return await this.#pool.getConnection();
    } catch (error) {
      if (isLoginDenied(error) && (this.#ssl === undefined || this.#plaintext) && (await this.#takesTls()))
        throw plaintextRefused(this.#address, error);
      if (!plaintextAllowed(error, this.#address.tls)) throw tlsError(error, this.#address);
      // Connections asked for at once all fail so on the TLS pool: the first swaps it, each asks the plaintext one.
      if (!this.#plaintext) {
        const tls = this.#pool;
        this.#plaintext = true;
        this.#pool = createPool(this.#address, this.#options, this.#size, undefined);
        void tls.end().catch(() => undefined);
      }
      return this.getConnection();
    }
  }

  /**
   * MariaDB answers a plaintext login under require_secure_transport=ON with "access denied", like
   * a wrong password: after such a refusal, one login over TLS (verifying nothing, sending the
   * same credentials the plaintext attempt just sent) tells the two apart for the message.
   */
  async #takesTls(): Promise<boolean> {
    const { host, port, user, password, database } = this.#address;
    try {
      const conn = await mysql.createConnection({
        host,
        port,
        user,
        password,
        database,
        connectTimeout: this.#options.connectTimeoutMs,
        ssl: { rejectUnauthorized: false },
      });
      await conn.end().catch(() => undefined);
      return true;
    } catch {
      return false;
    }
  }

  reloadTls(): void {
    if (this.#ssl === undefined) return;
    const fresh = mysqlSsl(this.#address.tls);
    if (fresh !== undefined) Object.assign(this.#ssl, fresh);
  }

  end(): Promise<void> {
    return this.#pool.end();
  }
}

/** How a connection travels: read off its socket, which mysql2 replaced by a TLS one after the handshake. */
function transportOf(conn: Connection): Transport {
  const stream = (
    conn.connection as unknown as { stream?: { getProtocol?: () => string | null; getCipher?: () => { name: string } } }
  ).stream;
  const version = stream?.getProtocol?.();
  return typeof version === 'string'
    ? { tls: true, version, cipher: stream?.getCipher?.().name ?? 'unknown' }
    : { tls: false };
}

function createPool(address: BackendAddress, options: BackendOptions, size: number, ssl: MysqlSsl | undefined): Pool {
  return mysql.createPool({
    ...(ssl !== undefined && { ssl }),
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
