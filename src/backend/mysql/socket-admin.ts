/** A local server's root account over its socket: the launcher's only MySQL client calls. */
import mysql from 'mysql2/promise';

/** Connects as root over the socket and disconnects: resolves once the server accepts connections. */
export async function pingSocket(socketPath: string, connectTimeoutMs: number): Promise<void> {
  const conn = await mysql.createConnection({ socketPath, user: 'root', connectTimeout: connectTimeoutMs });
  await conn.end();
}

/** Runs statements (several, separated by `;`) as root over the socket. */
export async function runAsRoot(socketPath: string, statements: string): Promise<void> {
  const conn = await mysql.createConnection({ socketPath, user: 'root', multipleStatements: true });
  try {
    await conn.query(statements);
  } finally {
    await conn.end();
  }
}
