/**
 * Other applications' tables on a backend's server. auto_increment_increment and _offset are
 * server-wide, so every AUTO_INCREMENT column of every schema strides by ticketd's increment too.
 * The server lists only what the inspecting account may see (information_schema hides the rest).
 */
import type { RowDataPacket } from 'mysql2/promise';
import type { SharedSchema } from '../ticket-backend.js';
import type { Db } from './pool.js';

/** Schemas of the server itself, which ticketd's settings do not concern. */
const SYSTEM_SCHEMAS = ['mysql', 'sys', 'information_schema', 'performance_schema'];

/**
 * The schemas other than the connection's own that hold AUTO_INCREMENT columns, with how many
 * tables each, by name. COLUMNS (the dictionary), not TABLES.AUTO_INCREMENT (MySQL caches that).
 */
export async function sharedSchemas(db: Db): Promise<SharedSchema[]> {
  const [rows] = await db.withConnection((conn) =>
    conn.query<RowDataPacket[]>({
      sql: `SELECT TABLE_SCHEMA AS name, COUNT(DISTINCT TABLE_NAME) AS tables
              FROM information_schema.COLUMNS
             WHERE EXTRA LIKE '%auto_increment%'
               AND TABLE_SCHEMA <> DATABASE()
               AND TABLE_SCHEMA NOT IN (?)
             GROUP BY TABLE_SCHEMA
             ORDER BY TABLE_SCHEMA`,
      values: [SYSTEM_SCHEMAS],
      timeout: db.options.queryTimeoutMs,
    }),
  );
  return rows.map((row) => ({ name: String(row.name), tables: Number(row.tables) }));
}
