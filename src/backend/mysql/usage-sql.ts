/** Usage accounting's rows on MySQL (core/usage.ts says what they mean; sql/schema.sql holds the table). */
import type { RowDataPacket } from 'mysql2/promise';
import type { StoredUsageRow, UsageRow } from '../../core/usage.js';
import { SchemaOutdatedError } from '../../core/errors.js';
import type { UsageStore } from '../usage-store.js';
import { isNoSuchTable } from './errors.js';
import { schemaStatements } from './schema.js';
import type { Db } from './pool.js';

const TABLE = 'ticketd_usage';
const COLUMNS =
  'sequence, instance, flush_no, stopped, flush_every_ms, ids_leased, ids_handed_out, ids_returned, ids_reclaimed, ids_cached, ids_lost_shutdown, ids_lost_retired, ids_lost_surplus, seconds_left';

/** The store of one backend. */
export class UsageSql implements UsageStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async prepare(): Promise<boolean> {
    const [rows] = await this.#db.withConnection((conn) =>
      conn.query<RowDataPacket[]>({
        sql: 'SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
        values: [TABLE],
        timeout: this.#db.options.queryTimeoutMs,
      }),
    );
    if (rows.length > 0) return true;
    // A fleet initialised by an older ticketd: the admin account (TICKETD_ADMIN_BACKENDS) may create it; the serving one may not.
    const create = schemaStatements().find((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS ${TABLE} `));
    if (create === undefined) throw new Error(`sql/schema.sql has no ${TABLE}`);
    return this.#db
      .withAdminConnection((conn) => conn.query({ sql: create, timeout: this.#db.options.ddlTimeoutMs }))
      .then(
        () => true,
        () => false,
      );
  }

  async write(instance: string, flush: number, rows: readonly UsageRow[]): Promise<void> {
    if (rows.length === 0) return;
    const values = rows.flatMap((r) => {
      const c = r.counts;
      return [r.sequence, instance, flush, r.stopped ? 1 : 0, r.flushEveryMs, c.leased, c.handedOut, c.returned]
        .concat([c.reclaimed, c.cached, c.abandoned.shutdown, c.abandoned.retired, c.abandoned.surplus])
        .map((v): string | null => (typeof v === 'number' ? String(v) : v))
        .concat([r.secondsLeft === null ? null : String(r.secondsLeft)]);
    });
    // One round trip: the new rows first, so that a failure between the two leaves the older ones, never none.
    await this.#outdatedIfMissing(() =>
      this.#db.withConnection((conn) =>
        conn.query({
          sql:
            `INSERT INTO ${TABLE} (${COLUMNS}) VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}; ` +
            `DELETE FROM ${TABLE} WHERE instance = ? AND flush_no < ?`,
          values: [...values, instance, String(flush)],
          timeout: this.#db.options.queryTimeoutMs,
        }),
      ),
    );
  }

  async read(sequence?: string): Promise<StoredUsageRow[]> {
    const [rows] = await this.#outdatedIfMissing(() =>
      this.#db.withConnection((conn) =>
        conn.query<RowDataPacket[]>({
          sql: `SELECT ${COLUMNS}, TIMESTAMPDIFF(MICROSECOND, written_at, NOW(3)) DIV 1000 AS age_ms FROM ${TABLE}${sequence === undefined ? '' : ' WHERE sequence = ?'}`,
          values: sequence === undefined ? [] : [sequence],
          timeout: this.#db.options.queryTimeoutMs,
        }),
      ),
    );
    return rows.map(toRow);
  }

  /** A backend without the table (an older schema) is an answer, not a failing backend: its breaker stays closed. */
  async #outdatedIfMissing<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (!isNoSuchTable(error)) throw error;
      throw new SchemaOutdatedError(
        `backend ${this.#db.label} has no ${TABLE} (schema of an older ticketd); run npx ticketd init`,
        {
          cause: error,
        },
      );
    }
  }
}

function toRow(r: RowDataPacket): StoredUsageRow {
  const n = (v: unknown): number => Number(String(v));
  return {
    sequence: String(r.sequence),
    instance: String(r.instance),
    flush: n(r.flush_no),
    stopped: n(r.stopped) === 1,
    flushEveryMs: n(r.flush_every_ms),
    secondsLeft: r.seconds_left === null ? null : n(r.seconds_left),
    ageMs: n(r.age_ms),
    counts: {
      leased: n(r.ids_leased),
      handedOut: n(r.ids_handed_out),
      returned: n(r.ids_returned),
      reclaimed: n(r.ids_reclaimed),
      cached: n(r.ids_cached),
      abandoned: {
        shutdown: n(r.ids_lost_shutdown),
        retired: n(r.ids_lost_retired),
        surplus: n(r.ids_lost_surplus),
        crash: 0,
      },
    },
  };
}
