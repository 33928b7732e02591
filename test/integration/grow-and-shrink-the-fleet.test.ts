// docs/operating.md, "Growing and shrinking the fleet", followed step by step under load with two
// front ends: a fleet of A and B at increment 2 (as shipped before 0.6) grows to A, B, C at 16,
// then B is removed. Every acknowledged ID is checked; no claim is refused once C takes traffic.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  backendOptionFile,
  findServerBinary,
  startLocalServer,
  type LocalServer,
} from '../../src/launcher/local-mysql.js';
import mysql from 'mysql2/promise';
import { IdLedger, sleep, startLoad } from '../support/id-ledger.js';
import {
  killConnections,
  putSequence,
  regressionReports,
  runCliAsync,
  spawnTicketd,
  sqlOn,
  type ChildTicketd,
} from '../support/ticketd.js';

const SEQUENCE = 'grown';
const BLOCK_SIZE = 10n;

async function lastTicket(url: string): Promise<bigint> {
  const conn = await mysql.createConnection(url);
  try {
    const [rows] = (await conn.query(`SELECT MAX(id) AS id FROM tickets_${SEQUENCE}`)) as unknown as [
      { id: string | number | null }[],
    ];
    return BigInt(String(rows[0]?.id ?? 0));
  } finally {
    await conn.end();
  }
}

describe('growing from 2 to 3 backends and removing one, as docs/operating.md says', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-grow-'));
  let servers: LocalServer[] = [];
  const frontEnds: ChildTicketd[] = [];
  /** The servers the load goes to; a rolling restart swaps entries in place. */
  const targets: { url: string; name: string }[] = [];

  beforeAll(async () => {
    const binary = findServerBinary(process.env.TICKETD_MYSQLD, process.env.PATH);
    const start = (name: string, file: string, args: string[]) =>
      startLocalServer({ name, optionFile: backendOptionFile(file), dir: join(dir, name), binary, extraArgs: args });
    servers = await Promise.all([
      start('a', 'a', ['--auto-increment-increment=2']),
      start('b', 'b', ['--auto-increment-increment=2']),
      // C is prepared as step 3 asks: the increment the plan names, the next free offset, durable.
      start('c', 'a', ['--auto-increment-increment=16', '--auto-increment-offset=3']),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(frontEnds.map((f) => f.stop()));
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  const fleet = (...names: string[]): string => names.map((n) => servers['abc'.indexOf(n)]!.url).join(',');
  /** Replaces each front end by one on `backends`, one at a time, while the load goes on to the others. */
  const rollingRestart = async (backends: string): Promise<void> => {
    for (let i = 0; i < targets.length; i++) {
      const old = frontEnds[i]!;
      targets.splice(i, 1);
      await old.stop();
      frontEnds[i] = await spawnTicketd(backends);
      targets.splice(i, 0, { url: frontEnds[i]!.url, name: `front-end-${i + 1}` });
    }
  };
  const cli = async (...args: string[]): Promise<string> => {
    const run = await runCliAsync(args, { TICKETD_BACKENDS: fleet('a', 'b') });
    if (run.status !== 0) throw new Error(`${args.join(' ')}: ${run.stdout}${run.stderr}`);
    return run.stdout;
  };

  it('repeats nothing, C takes traffic, no claim is refused, and B leaves cleanly', async () => {
    const [a, b, c] = servers as [LocalServer, LocalServer, LocalServer];
    expect((await runCliAsync(['init'], { TICKETD_BACKENDS: fleet('a', 'b') })).status).toBe(0);
    for (let i = 0; i < 2; i++) {
      frontEnds.push(await spawnTicketd(fleet('a', 'b')));
      targets.push({ url: frontEnds[i]!.url, name: `front-end-${i + 1}` });
    }
    expect(await putSequence(targets[0]!.url, SEQUENCE, { blockSize: Number(BLOCK_SIZE) })).toBe(201);
    const ledger = new IdLedger();
    const load = startLoad(ledger, targets, SEQUENCE, 4);
    await sleep(1000);

    const plan = await cli('backends', 'add', c.url);
    expect(plan).toContain(`adding ${c.url} as backend C: auto_increment_increment=16, auto_increment_offset=3`);
    expect(plan).toMatch(/1\. \[to do\] every backend at auto_increment_increment=16/);
    expect(plan).toContain(`A mysql://127.0.0.1:${a.port}/ticketd: SET GLOBAL auto_increment_increment = 16;`);
    expect(plan).toMatch(/3\. \[done\] the new backend/);
    expect(plan).toMatch(/4\. \[to do\] seed it/);

    // Step 1, on each backend (the option files too, in a real fleet); the front ends keep serving.
    const failures = (): number =>
      [...ledger.statuses].filter(([status]) => status !== 200).reduce((n, [, k]) => n + k, 0);
    const [okBefore, failedBefore] = [ledger.statuses.get(200) ?? 0, failures()];
    // Each backend's connections are cut right after, so the front ends open new ones and see the
    // new increment at once (as they would after an idle spell or a network blip).
    await sqlOn(a.url, 'SET GLOBAL auto_increment_increment = 16');
    await killConnections(a.url);
    await sleep(300);
    await sqlOn(b.url, 'SET GLOBAL auto_increment_increment = 16');
    await killConnections(b.url);
    await sleep(1000);
    expect(failures()).toBe(failedBefore);
    expect(ledger.statuses.get(200) ?? 0).toBeGreaterThan(okBefore);

    // Step 2: a rolling restart with the same backends.
    await rollingRestart(fleet('a', 'b'));
    // Step 4, as step 4 of the plan prints it.
    const seed = /4\. \[to do\] .*\n\s+(npx ticketd .*)/.exec(await cli('backends', 'add', c.url))![1]!;
    expect(seed).toBe(`npx ticketd backends add ${c.url} --increment 16 --seed`);
    const seeded = await cli(...seed.split(' ').slice(2));
    const seededAt = BigInt(new RegExp(`seeded ${SEQUENCE}: next ticket (\\d+)`).exec(seeded)![1]!);
    expect(seeded).toMatch(/4\. \[done\] seed it/);
    // Step 5: a rolling restart with A, B and C.
    await rollingRestart(fleet('a', 'b', 'c'));
    await sleep(3000);
    expect((await runCliAsync(['check'], { TICKETD_BACKENDS: fleet('a', 'b', 'c') })).stdout).toContain(
      'ok: 3 backends checked',
    );
    const cLast = await lastTicket(c.url);
    // C issued tickets of its own class, from where it was seeded on.
    expect(cLast % 16n).toBe(3n);
    expect(cLast).toBeGreaterThanOrEqual(seededAt);
    // Metrics name the backends A, B and C (their places in TICKETD_BACKENDS).
    for (const label of ['A', 'B', 'C'])
      expect(
        await regressionReports(
          targets.map((t) => t.url),
          label,
        ),
      ).toBe(0);

    // Removing B: a rolling restart without it, then its floors on the others.
    const removal = (await runCliAsync(['backends', 'remove', b.url], { TICKETD_BACKENDS: fleet('a', 'b', 'c') }))
      .stdout;
    expect(removal).toMatch(
      /1\. \[not visible here\] restart every front end, one at a time, with TICKETD_BACKENDS=mysql:\/\/root@127\.0\.0\.1:\d+\/ticketd,mysql:\/\/root@127\.0\.0\.1:\d+\/ticketd/,
    );
    expect(removal).toContain(`2. [to do] floors of its class on the other backends at its counters`);
    expect(removal).toContain(`npx ticketd backends remove ${b.url} --apply (after step 1)`);
    await rollingRestart(fleet('a', 'c'));
    const retired = await runCliAsync(['backends', 'remove', b.url, '--apply'], {
      TICKETD_BACKENDS: fleet('a', 'b', 'c'),
    });
    expect(retired.stdout).toMatch(new RegExp(`floor of ${SEQUENCE} at ticket \\d+ on every other backend`));
    expect(retired.stdout).toContain('2. [done] floors of its class on the other backends at its counters');
    await sleep(2000);
    await load.stop();

    console.log(
      `grew 2 → 3 and removed one under load: ${ledger.acknowledged} IDs, ${ledger.repeats.length} repeated, C's last ticket ${cLast}, seeded at ${seededAt}`,
    );
    expect(ledger.repeats).toEqual([]);
    expect(ledger.acknowledged).toBeGreaterThan(5000);
    expect((await runCliAsync(['check'], { TICKETD_BACKENDS: fleet('a', 'c') })).stdout).toContain(
      'ok: 2 backends checked',
    );
  }, 180_000);
});
