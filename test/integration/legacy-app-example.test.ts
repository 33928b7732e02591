import { spawnSync } from 'node:child_process';
import mysql from 'mysql2/promise';
import { createTicketClient } from 'ticketd';
import { CREATE_ORDERS_TABLE, placeOrder, placeOrderLegacy } from '../../examples/legacy-app/orders.js';
import { runCli, sharedBackends, spawnTicketd, startLegacyServer, type ChildTicketd } from '../support/ticketd.js';

// The walkthrough in docs/migrating.md, step by step, on real servers.
describe('examples/legacy-app: from AUTO_INCREMENT to ticketd', () => {
  let legacy: Awaited<ReturnType<typeof startLegacyServer>>;
  let ticketd: ChildTicketd;
  let db: mysql.Connection;
  const env = (): Record<string, string> => ({ TICKETD_BACKENDS: sharedBackends() });
  const flags = (): string[] => ['--source', legacy.url, '--table', 'orders', '--sequence', 'order_ids'];

  beforeAll(async () => {
    legacy = await startLegacyServer();
    db = await mysql.createConnection({ uri: legacy.url, supportBigNumbers: true, bigNumberStrings: true });
    ticketd = await spawnTicketd(sharedBackends());
  });
  afterAll(async () => {
    await ticketd?.stop();
    await db?.end();
    await legacy?.stop();
  });

  it('runs the whole cut-over with no ID taken twice', async () => {
    await db.query(CREATE_ORDERS_TABLE);
    const before: bigint[] = [];
    for (let i = 0; i < 300; i++) before.push(await placeOrderLegacy(db, { customer: `c${i}`, totalCents: 100 + i }));

    const plan = runCli(['migrate', 'plan', ...flags(), '--headroom', '1000'], env());
    expect(plan.status).toBe(0);
    const apply = /^ {2}1\. (npx ticketd migrate apply .*)$/m.exec(plan.stdout)![1]!;
    const startAfter = /--start-after (\d+)/.exec(apply)![1]!;

    // The app still inserts through AUTO_INCREMENT while apply runs: the headroom covers it.
    for (let i = 0; i < 50; i++) before.push(await placeOrderLegacy(db, { customer: 'late', totalCents: 1 }));
    const reserve = /--legacy-reserve (\d+)/.exec(apply)![1]!;
    const applied = runCli(
      ['migrate', 'apply', ...flags(), '--block-size', '100', '--start-after', startAfter, '--legacy-reserve', reserve],
      env(),
    );
    expect(applied.stderr).toBe('');
    expect(applied.status).toBe(0);

    // The switch: orders now take their IDs from ticketd through the SDK, from several callers at once.
    const ids = createTicketClient({ urls: [ticketd.url], sequence: 'order_ids' });
    const after = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => placeOrder(db, ids, { customer: `n${i}`, totalCents: 500 })),
    );
    await ids.close();
    const legacyTop = before.reduce((a, b) => (a > b ? a : b));
    for (const id of after) expect(id > legacyTop && id > BigInt(startAfter)).toBe(true);
    const [count] = await db.query<mysql.RowDataPacket[]>('SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM orders');
    expect(count[0]).toEqual({ n: '1350', d: '1350' });

    const verified = runCli(['migrate', 'verify', ...flags()], env());
    expect(verified.status).toBe(0);
    // verify warns while AUTO_INCREMENT is on, and prints the command that drops it, which runs as printed.
    const alter = /Once no old version inserts without an ID, drop it: (npx ticketd migrate apply .* --alter)$/m.exec(
      verified.stdout,
    )![1]!;
    expect(alter).toBe(
      `npx ticketd migrate apply --source '${legacy.url}' --table orders --column id --sequence order_ids --block-size 100 --start-after ${startAfter} --legacy-reserve ${reserve} --alter`,
    );
    const altered = spawnSync('bash', ['-c', alter], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', ...env() },
    });
    expect(altered.stdout).toMatch(/^ran: ALTER TABLE `orders` MODIFY `id` int\(11\) NOT NULL$/m);
    expect(altered.status).toBe(0);
    const strict = runCli(['migrate', 'verify', ...flags(), '--strict'], env());
    expect(strict.stdout).toMatch(/^ok: 1000 IDs above startAfter/);
    expect(strict.status).toBe(0);
    // Planning again says the sequence exists and prints what is left, which runs as printed.
    const again = runCli(['migrate', 'plan', ...flags()], env());
    expect(again.stdout).toMatch(
      new RegExp(
        `^sequence: +order_ids exists \\(blockSize=100 startAfter=\\d+ maxId=${2147483647n - BigInt(reserve)} ids=ordered\\): migrate apply has run$`,
        'm',
      ),
    );
    expect(again.stdout).not.toMatch(/start-after|ALTER/);
    const verify = /^ {2}2\. (npx ticketd migrate verify .*)$/m.exec(again.stdout)![1]!;
    expect(verify).toBe(
      `npx ticketd migrate verify --source '${legacy.url}' --table orders --column id --sequence order_ids --strict`,
    );
    const printed = spawnSync('bash', ['-c', verify], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', ...env() },
    });
    expect(printed.stdout).toMatch(/^ok: 1000 IDs above startAfter/);
    expect(printed.status).toBe(0);
    // With AUTO_INCREMENT gone, an insert that forgot its ID fails instead of taking one of ticketd's.
    await expect(placeOrderLegacy(db, { customer: 'old code path', totalCents: 1 })).rejects.toThrow(
      /doesn't have a default value/,
    );
  });
});
