/**
 * auto_increment_increment and _offset are server-wide: a second schema's AUTO_INCREMENT table on a
 * backend's server strides by ticketd's increment too. `check` warns about it (naming the backend
 * and the schema) and still passes: the other application's IDs stay unique, only their spacing
 * changes. The stride is shown taking hold on the other table before check is judged. The server
 * shows an account only the schemas it has privileges in, so the warning is as wide as the account.
 */
import type { LocalPair } from '../../src/launcher/local-pair.js';
import mysql, { type RowDataPacket } from 'mysql2/promise';
import { describeEachEngine } from '../support/engines.js';
import { runCli, sqlOn, startPrivatePair } from '../support/ticketd.js';

const SHARED = /^warning: backend (\S+) shares its server with other schemas: (.*)$/gm;

describeEachEngine('check warns about backends that share their server', (engine) => {
  let pair: LocalPair & { dispose(): Promise<void> };
  let env: Record<string, string>;

  beforeAll(async () => {
    pair = await startPrivatePair(engine.binary);
    env = { TICKETD_BACKENDS: pair.backendsUrl };
  });

  afterAll(async () => {
    await pair.dispose();
  });

  it('says nothing of the kind for servers of ticketd alone', () => {
    const result = runCli(['check'], env);
    expect(result.stdout).toMatch(/^ok: 2 backends checked$/m);
    expect([...result.stdout.matchAll(SHARED)]).toEqual([]);
  });

  it('warns, naming the backend and the schema, when another schema on its server has AUTO_INCREMENT tables, and still passes', async () => {
    await sqlOn(
      pair.a.url,
      'CREATE DATABASE legacy_app',
      'CREATE TABLE legacy_app.orders (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(20)) ENGINE=InnoDB',
      'CREATE TABLE legacy_app.customers (id BIGINT AUTO_INCREMENT PRIMARY KEY) ENGINE=InnoDB',
      'CREATE TABLE legacy_app.notes (note VARCHAR(20)) ENGINE=InnoDB',
      "INSERT INTO legacy_app.orders (note) VALUES ('first'), ('second')",
    );
    // The hazard itself: the legacy table's rows stride by ticketd's increment (16), from offset 1.
    const conn = await mysql.createConnection(pair.a.url);
    const [rows] = await conn
      .query<RowDataPacket[]>('SELECT id FROM legacy_app.orders ORDER BY id')
      .finally(() => conn.end());
    expect(rows.map((r) => Number(r.id))).toEqual([1, 17]);

    const result = runCli(['check'], env);
    const warnings = [...result.stdout.matchAll(SHARED)];
    expect(warnings.map((w) => [w[1], w[2]])).toEqual([
      [
        pair.backendsUrl.split(',')[0]!.replace(/^mysql:\/\/[^@]*@/, 'mysql://'),
        expect.stringMatching(
          /^legacy_app \(2 AUTO_INCREMENT tables\); auto_increment_increment=16 and auto_increment_offset=1 are server-wide/,
        ),
      ],
    ]);
    expect(result.stdout).toMatch(/give ticketd a server \(or an instance\) of its own/);
    expect(result.stdout).toMatch(/^ok: 2 backends checked$/m);
    expect(result.status).toBe(0);
    console.log(`check on a shared server [${engine.name}]: ${warnings[0]![0]}`);
  });

  it('sees only what its account may see: an account granted on ticketd alone gets no warning', async () => {
    const grants = [
      "CREATE USER IF NOT EXISTS 'tk_only'@'%' IDENTIFIED BY 'only-pass-0123456789'",
      "GRANT SELECT, INSERT, DELETE ON ticketd.* TO 'tk_only'@'%'",
    ];
    await sqlOn(pair.a.url, ...grants);
    await sqlOn(pair.b.url, ...grants);
    const only = [pair.a.url, pair.b.url].map((u) =>
      u.replace('mysql://root@', 'mysql://tk_only:only-pass-0123456789@'),
    );
    const result = runCli(['check'], { TICKETD_BACKENDS: only.join(',') });
    // It logged in and inspected both servers (a transport line each), or the silence would prove nothing.
    expect(result.stdout.match(/^info: backend mysql:\/\/127\.0\.0\.1:\d+\/ticketd: (?:plaintext|TLS)/gm)).toHaveLength(
      2,
    );
    expect(result.stdout).not.toMatch(/refused the connection|did not answer/);
    expect([...result.stdout.matchAll(SHARED)]).toEqual([]);
    // The schema is still there: root still gets the warning.
    expect([...runCli(['check'], env).stdout.matchAll(SHARED)]).toHaveLength(1);
  });

  it('stops warning once the other schema has gone', async () => {
    await sqlOn(pair.a.url, 'DROP DATABASE legacy_app');
    const result = runCli(['check'], env);
    expect([...result.stdout.matchAll(SHARED)]).toEqual([]);
    expect(result.status).toBe(0);
  });
});
