/**
 * examples/legacy-app through a rolling deploy, exactly as docs/migrating.md ("A rolling deploy")
 * tells it: the old version inserts through AUTO_INCREMENT from before the plan to after the
 * rollback; the new version inserts ticketd's IDs beside it; each is restarted mid-way; then the
 * sequence is retired and rolled back while the new version drains the IDs it still holds. Not one
 * duplicate key, not one old-version row with an ID ticketd issued, and verify clean at the end and
 * failing on a planted collision. On every engine found, for signed INT and unsigned BIGINT (the
 * other column types: migrate-column-types-cut-over.test.ts).
 */
import mysql from 'mysql2/promise';
import { createTicketClient, type TicketClient } from 'ticketd';
import { CREATE_ORDERS_TABLE, placeOrder, placeOrderLegacy } from '../../examples/legacy-app/orders.js';
import type { RunningTicketd } from '../../src/server.js';
import { describeEachEngine } from '../support/engines.js';
import { sleep } from '../support/id-ledger.js';
import { runCliAsync, sharedBackends, startInProcess, startLegacyServer } from '../support/ticketd.js';

/** How long both versions insert side by side before the rollback, and how long the old one goes on after it. */
const SIDE_BY_SIDE_MS = 6_000;
const AFTER_ROLLBACK_MS = 1_500;
/** Each instance waits this long between its inserts: an app's pace, not a benchmark's, on a shared 2-core machine. */
const PAUSE_MS = 3;
/** Small blocks, so that draining what an instance holds after the rollback takes a moment, not a minute. */
const BLOCK_SIZE = '200';

/** What every instance of either version did. */
interface Tally {
  readonly oldIds: bigint[];
  readonly newIds: bigint[];
  /** Every ID ticketd handed to a new-version instance, inserted or not. */
  readonly issued: bigint[];
  duplicates: number;
  readonly errors: string[];
  restarts: { old: number; new: number };
}

/** A TicketClient that records every ID it hands out. */
function recording(client: TicketClient, issued: bigint[]): TicketClient {
  const keep = (id: bigint): bigint => (issued.push(id), id);
  return {
    next: async () => keep(await client.next()),
    nextSync: () => keep(client.nextSync()),
    nextBatch: async (count) => (await client.nextBatch(count)).map(keep),
    codec: () => client.codec(),
    close: () => client.close(),
  };
}

const isDuplicate = (error: unknown): boolean => (error as { code?: string }).code === 'ER_DUP_ENTRY';
/** An error the legacy server sent (the insert failed), not one of ticketd's. */
const isServerError = (error: unknown): boolean => typeof (error as { sqlMessage?: unknown }).sqlMessage === 'string';

describeEachEngine('examples/legacy-app: a rolling cut-over, old and new versions side by side', (engine) => {
  let legacy: Awaited<ReturnType<typeof startLegacyServer>>;
  let server: RunningTicketd;

  beforeAll(async () => {
    legacy = await startLegacyServer(engine.binary);
    server = await startInProcess(sharedBackends());
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await legacy?.stop();
  });

  it.each([
    ['INT', 'int', 2147483647n],
    ['BIGINT UNSIGNED', 'ubig', 18446744073709551615n],
  ])(
    '%s: 0 duplicate keys, 0 rows with an ID ticketd issued, verify clean and failing on a planted collision',
    async (idType, suffix, columnMax) => {
      // A database per case: the example's SQL names its table `orders`.
      const database = `shop_${suffix}`;
      const root = await mysql.createConnection(legacy.url);
      await root.query(`CREATE DATABASE ${database}`);
      await root.end();
      const url = legacy.url.replace(/\/shop$/, `/${database}`);
      const sequence = `rolling_${engine.binary.flavor}_${suffix}`;
      const env = { TICKETD_BACKENDS: sharedBackends(), TICKETD_SOURCE: url };
      const flags = ['--table', 'orders', '--sequence', sequence];
      const connect = (): Promise<mysql.Connection> =>
        mysql.createConnection({ uri: url, supportBigNumbers: true, bigNumberStrings: true });

      const setup = await connect();
      await setup.query(CREATE_ORDERS_TABLE.replace('id INT NOT NULL', `id ${idType} NOT NULL`));
      for (let i = 0; i < 200; i++) await placeOrderLegacy(setup, { customer: `before${i}`, totalCents: i });
      await setup.end();

      const t: Tally = { oldIds: [], newIds: [], issued: [], duplicates: 0, errors: [], restarts: { old: 0, new: 0 } };
      const failed = (who: string, error: unknown): void => {
        if (isDuplicate(error)) t.duplicates++;
        else t.errors.push(`${who}: ${(error as Error).message}`);
      };

      // The old version: two instances inserting without an ID from before the plan to the end; the
      // first restarts (a new connection) once mid-way.
      let oldRunning = true;
      // Set when the case ends, passed or failed: every instance stops, so nothing outlives the test.
      let stop = false;
      const restartOld = { wanted: false };
      const oldInstance = async (k: number): Promise<void> => {
        let db = await connect();
        while (oldRunning && !stop) {
          if (k === 0 && restartOld.wanted) {
            restartOld.wanted = false;
            await db.end();
            db = await connect();
            t.restarts.old++;
          }
          await placeOrderLegacy(db, { customer: `old${k}`, totalCents: 1 }).then(
            (id) => void t.oldIds.push(id),
            (e: unknown) => failed('old', e),
          );
          await sleep(PAUSE_MS);
        }
        await db.end();
      };
      const oldVersion = [oldInstance(0), oldInstance(1)];
      const newVersion: Promise<void>[] = [];
      try {
        // Before: plan, then the apply command it printed, as printed, while the old version inserts.
        const plan = await runCliAsync(['migrate', 'plan', ...flags, '--block-size', BLOCK_SIZE], env);
        expect(plan.stderr).toBe('');
        const apply = /^ {2}1\. (npx ticketd migrate apply .*)$/m.exec(plan.stdout)![1]!;
        const applied = await runCliAsync(['-c', apply], env, ['bash']);
        expect(applied.stderr).toBe('');
        const maxId = BigInt(/maxId=(\d+)/.exec(applied.stdout)![1]!);
        expect(applied.stdout).toMatch(new RegExp(`^ran: ALTER TABLE \`orders\` AUTO_INCREMENT = ${maxId + 1n}$`, 'm'));
        expect(maxId).toBeLessThan(columnMax);

        // During: the new version rolls out beside the old one, two instances; the first restarts
        // (a new SDK client: its leased IDs are given up, a gap) once mid-way. After the retire, each
        // drains the IDs it holds, and stops at ticketd's 410 for more.
        let retired = false;
        const restartNew = { wanted: false };
        const newInstance = async (k: number): Promise<void> => {
          const db = await connect();
          let ids = recording(createTicketClient({ urls: [server.url], sequence }), t.issued);
          while (!stop) {
            if (k === 0 && restartNew.wanted) {
              restartNew.wanted = false;
              await ids.close();
              ids = recording(createTicketClient({ urls: [server.url], sequence }), t.issued);
              t.restarts.new++;
            }
            try {
              t.newIds.push(await placeOrder(db, ids, { customer: `new${k}`, totalCents: 2 }));
              await sleep(PAUSE_MS);
            } catch (error) {
              if (isServerError(error)) failed('new', error);
              else if (retired) break;
              else t.errors.push(`new: ${(error as Error).message}`);
            }
          }
          await ids.close();
          await db.end();
        };
        newVersion.push(newInstance(0), newInstance(1));
        await sleep(SIDE_BY_SIDE_MS / 2);
        restartOld.wanted = true;
        restartNew.wanted = true;
        // verify during the roll-out: clean, and names both writers.
        const during = await runCliAsync(['migrate', 'verify', ...flags], env);
        expect(during.stdout).toMatch(/^ok: \d+ IDs above startAfter \d+, all in blocks ticketd has handed out$/m);
        expect(during.stdout).toMatch(/^old version: \d+ IDs above maxId/m);
        expect(during.status).toBe(0);
        await sleep(SIDE_BY_SIDE_MS / 2);

        // The rollback: no more tickets; the counter is already above every ID ticketd may issue.
        retired = true;
        expect((await runCliAsync(['sequences', 'retire', sequence], env)).status).toBe(0);
        const rolled = await runCliAsync(['migrate', 'rollback', ...flags, '--apply'], env);
        expect(rolled.stderr).toBe('');
        expect(rolled.stdout).toMatch(new RegExp(`^orders: AUTO_INCREMENT from ${maxId + 1n}$`, 'm'));
        expect(rolled.stdout).toMatch(/^done already/m);
        // The new version drains what it holds while the old one goes on.
        await Promise.all(newVersion);
        await sleep(AFTER_ROLLBACK_MS);
        oldRunning = false;
        await Promise.all(oldVersion);

        const db = await connect();
        const [counted] = await db.query<mysql.RowDataPacket[]>(
          'SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM orders',
        );
        const count = counted[0]!;
        await db.end();
        const issued = new Set(t.issued);
        const startAfter = BigInt(/--start-after (\d+)/.exec(apply)![1]!);
        const inReserve = t.oldIds.filter((id) => id > maxId);
        console.log(
          `rolling cut-over [${engine.name}, ${idType}]: old version ${t.oldIds.length} rows (${inReserve.length} in the reserve above maxId ${maxId}; ${t.restarts.old} restart), ` +
            `new version ${t.newIds.length} rows (${t.issued.length} IDs issued; ${t.restarts.new} restart); ${t.duplicates} duplicate keys; ${String(count.n)} rows`,
        );
        expect(t.errors).toEqual([]);
        expect(t.duplicates).toBe(0);
        expect(t.restarts).toEqual({ old: 1, new: 1 });
        expect(t.newIds.length).toBeGreaterThan(100);
        expect(inReserve.length).toBeGreaterThan(100);
        // No old-version row holds an ID ticketd issued; the old version's rows lie before startAfter
        // (before apply) or above maxId (after it), ticketd's in between.
        expect(t.oldIds.filter((id) => issued.has(id))).toEqual([]);
        expect(t.oldIds.filter((id) => id > startAfter && id <= maxId)).toEqual([]);
        expect(t.issued.filter((id) => id <= startAfter || id > maxId)).toEqual([]);
        const rows = String(200 + t.oldIds.length + t.newIds.length);
        expect([String(count.n), String(count.d)]).toEqual([rows, rows]);

        // After: verify clean, with the sequence retired and drained.
        const after = await runCliAsync(['migrate', 'verify', ...flags], env);
        expect(after.stdout).toContain(`ok: ${t.newIds.length} IDs above startAfter`);
        expect(after.stdout).toMatch(new RegExp(`^old version: \\d+ IDs above maxId ${maxId}`, 'm'));
        expect(after.status).toBe(0);
        // A planted collision: a row at an ID ticketd has not issued and could issue later.
        const planted = await connect();
        await planted.query('INSERT INTO orders (id, customer, total_cents) VALUES (?, ?, ?)', [
          String(maxId),
          'planted',
          0,
        ]);
        await planted.end();
        const bad = await runCliAsync(['migrate', 'verify', ...flags], env);
        expect(bad.stdout).toContain(`problem: 1 of ${t.newIds.length + 1} IDs above startAfter`);
        expect(bad.stdout).toContain(`later: ${maxId} (written without ticketd`);
        expect(bad.status).toBe(1);
      } finally {
        stop = true;
        await Promise.allSettled([...oldVersion, ...newVersion]);
      }
    },
    120_000,
  );
});
