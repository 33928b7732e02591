/**
 * Taking a migration back, as docs/migrating.md tells it: a legacy INT table migrated onto a
 * sequence, the application inserting IDs from HTTP and from the SDK under load; then the sequence
 * is retired and the migration rolled back, and the application inserts with AUTO_INCREMENT while
 * the old SDK clients drain the blocks they still hold. Not one duplicate key.
 */
import mysql from 'mysql2/promise';
import { createTicketClient, type TicketClient } from 'ticketd-client';
import type { RunningTicketd } from '../../src/server.js';
import { sleep } from '../support/id-ledger.js';
import { runCli, startInProcess, startLegacyServer, startPrivatePair } from '../support/ticketd.js';

const TABLE = 'orders';

describe('a migration taken back to AUTO_INCREMENT', () => {
  let pair: Awaited<ReturnType<typeof startPrivatePair>>;
  let server: RunningTicketd;
  let legacy: Awaited<ReturnType<typeof startLegacyServer>>;
  let db: mysql.Pool;
  const clients: TicketClient[] = [];

  beforeAll(async () => {
    pair = await startPrivatePair();
    server = await startInProcess(pair.backendsUrl);
    legacy = await startLegacyServer();
    db = mysql.createPool({ uri: legacy.url, connectionLimit: 8 });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await db?.end();
    await server?.close();
    await legacy?.stop();
    await pair?.dispose();
  });

  it('gives 0 duplicate keys while old SDK clients drain and the application inserts with AUTO_INCREMENT', async () => {
    await db.query(
      `CREATE TABLE ${TABLE} (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, customer VARCHAR(40) NOT NULL, created_at DATETIME NOT NULL)`,
    );
    for (let i = 0; i < 20; i++) await db.query(`INSERT INTO ${TABLE} (customer, created_at) VALUES ('legacy', NOW())`);
    const env = { TICKETD_BACKENDS: pair.backendsUrl };
    const src = ['--source', legacy.url, '--table', TABLE];
    const plan = JSON.parse(runCli(['migrate', 'plan', ...src, '--json'], env).stdout) as {
      startAfter: string;
      blockSize: string;
    };
    const applied = runCli(
      ['migrate', 'apply', ...src, '--block-size', plan.blockSize, '--start-after', plan.startAfter, '--alter'],
      env,
    );
    expect(applied.stderr).toBe('');

    const counts = { http: 0, sdk: 0, drained: 0, auto: 0, duplicates: 0, other: [] as string[] };
    const insert = async (id: bigint | undefined, who: 'http' | 'sdk' | 'drained' | 'auto'): Promise<void> => {
      const sql =
        id === undefined
          ? `INSERT INTO ${TABLE} (customer, created_at) VALUES (?, NOW())`
          : `INSERT INTO ${TABLE} (id, customer, created_at) VALUES (${id}, ?, NOW())`;
      await db.query(sql, [who]).then(
        () => {
          counts[who]++;
        },
        (error: unknown) => {
          const { code, message } = error as { code?: string; message?: string };
          if (code === 'ER_DUP_ENTRY') counts.duplicates++;
          else counts.other.push(`${who}: ${String(message)}`);
        },
      );
    };

    // The application under load: some instances take IDs over HTTP, others through the SDK.
    for (let i = 0; i < 3; i++) clients.push(createTicketClient({ urls: [server.url], sequence: TABLE }));
    let serving = true;
    const httpApp = (async () => {
      while (serving) {
        const res = await fetch(`${server.url}/v1/sequences/${TABLE}/ids?count=5`, { method: 'POST' });
        if (res.status !== 200) break;
        for (const id of ((await res.json()) as { ids: string[] }).ids) await insert(BigInt(id), 'http');
      }
    })();
    const sdkApps = clients.map(async (c) => {
      while (serving) await insert(await c.next(), 'sdk');
    });
    await sleep(2000);
    serving = false;
    await Promise.all([httpApp, ...sdkApps]);

    // Refused until the sequence is retired: new tickets could still be taken while the app switches.
    const early = runCli(['migrate', 'rollback', ...src, '--apply'], env);
    expect([early.status, early.stderr]).toEqual([
      1,
      expect.stringMatching(/not retired.*sequences retire orders .*\(TICKETD_MIGRATION_REFUSED\)$/),
    ]);

    expect(runCli(['sequences', 'retire', TABLE], env).status).toBe(0);
    const rolled = runCli(['migrate', 'rollback', ...src, '--apply'], env);
    expect(rolled.stderr).toBe('');
    expect(rolled.stdout).toMatch(
      /^ran: ALTER TABLE `orders` MODIFY `id` int\(11\) NOT NULL AUTO_INCREMENT, AUTO_INCREMENT = \d+$/m,
    );

    // The old SDK clients drain what they hold while new instances insert with AUTO_INCREMENT.
    const drain = clients.map(async (c) => {
      for (;;) {
        let id: bigint;
        try {
          id = c.nextSync();
        } catch {
          return;
        }
        await insert(id, 'drained');
      }
    });
    const autoApp = (async () => {
      for (let i = 0; i < 300; i++) await insert(undefined, 'auto');
    })();
    await Promise.all([...drain, autoApp]);

    const [top] = await db.query<mysql.RowDataPacket[]>(`SELECT MAX(id) AS top, COUNT(*) AS n FROM ${TABLE}`);
    console.log(
      `rollback: ${counts.http} rows with IDs over HTTP and ${counts.sdk} through the SDK before; after the rollback ${counts.drained} drained by old SDK clients and ${counts.auto} by AUTO_INCREMENT; ${counts.duplicates} duplicate keys; ${String(top[0]!.n)} rows, highest ${String(top[0]!.top)}`,
    );
    expect(counts.other).toEqual([]);
    expect(counts.duplicates).toBe(0);
    expect(counts.http).toBeGreaterThan(100);
    expect(counts.sdk).toBeGreaterThan(100);
    expect(counts.drained).toBeGreaterThan(0);
    expect(counts.auto).toBe(300);
    // Run again, it finds the rollback done, the application's rows above notwithstanding.
    const again = runCli(['migrate', 'rollback', ...src, '--apply', '--json'], env);
    expect(again.status).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ done: true, applied: false, refusal: null });
  }, 120_000);
});
