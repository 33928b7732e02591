/**
 * `ticketd backends restore` under load, on every engine, with the accounts docs/operating.md grants
 * (the front ends on the serving account alone; the command on the admin account with its restore
 * grant). The engine's own reload of a dump races the front ends (a REPLACE recreates the stub row
 * between the dump's CREATE TABLE and its INSERT: ERROR 1062, a backend left half-restored); the
 * command loads the dump into a staging database of its own, then merges it by additions only.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import type { RowDataPacket } from 'mysql2/promise';
import type { ServerBinary } from '../../src/launcher/local-mysql.js';
import { commandFor } from '../../src/launcher/server-binary.js';
import type { RunningTicketd } from '../../src/server.js';
import { ADMIN_GRANTS, SERVING_GRANTS, withAccount } from '../support/accounts.js';
import { describeEachEngine } from '../support/engines.js';
import { IdLedger, sleep, startLoad } from '../support/id-ledger.js';
import { putSequence, runCliAsync, sqlOn, startInProcess, startPrivatePair } from '../support/ticketd.js';

const SEQUENCE = 'restored_live';
const BLOCK = 10n;
const INCREMENT = 16n;

/** The backup command of docs/production.md for the engine (`--databases`: the restore leaves its CREATE DATABASE and USE out). */
function dump(binary: ServerBinary, port: number): string {
  const mysqlFlavor = binary.flavor === 'mysql';
  const { command, args } = commandFor(binary, mysqlFlavor ? 'mysqldump' : 'mariadb-dump');
  const options = ['--single-transaction', ...(mysqlFlavor ? ['--set-gtid-purged=OFF'] : []), '--databases', 'ticketd'];
  const run = spawnSync(command, [...args, '--host=127.0.0.1', `--port=${port}`, '--user=root', ...options], {
    encoding: 'utf8',
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`${command} failed: ${run.stderr}`);
  return run.stdout;
}

/** The counter of the sequence's ticket table on a server, as SHOW CREATE TABLE has it. */
async function counterOf(rootUrl: string): Promise<bigint> {
  const conn = await mysql.createConnection(rootUrl);
  try {
    const [rows] = await conn.query<RowDataPacket[]>(`SHOW CREATE TABLE tickets_${SEQUENCE}`);
    return BigInt(/AUTO_INCREMENT=(\d+)/.exec(String(rows[0]?.['Create Table']))?.[1] ?? '1');
  } finally {
    await conn.end();
  }
}

async function tablesOf(rootUrl: string): Promise<string[]> {
  const conn = await mysql.createConnection(rootUrl);
  try {
    const [rows] = await conn.query<RowDataPacket[]>('SHOW TABLES');
    return rows.map((r) => String(Object.values(r)[0]));
  } finally {
    await conn.end();
  }
}

async function databases(rootUrl: string): Promise<string[]> {
  const conn = await mysql.createConnection(rootUrl);
  try {
    const [rows] = await conn.query<RowDataPacket[]>('SHOW DATABASES');
    return rows.map((r) => String(Object.values(r)[0]));
  } finally {
    await conn.end();
  }
}

describeEachEngine('a backend restored live with backends restore', (engine) => {
  let pair: Awaited<ReturnType<typeof startPrivatePair>>;
  const servers: RunningTicketd[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-restore-live-'));
  const roots = (): string[] => pair.backendsUrl.split(',');
  const as = (user: string, pass: string): string => withAccount(pair.backendsUrl, user, pass);
  const restore = (backend: string, file: string): ReturnType<typeof runCliAsync> =>
    runCliAsync(['backends', 'restore', backend, '--from', file], {
      TICKETD_BACKENDS: as('tk_serve', 'serve-pass'),
      TICKETD_ADMIN_BACKENDS: as('tk_admin', 'admin-pass'),
    });
  /** The ticket an ID came from is A's when its residue is A's offset (1 of 16). */
  const fromA = (id: string): boolean => (BigInt(id) / BLOCK) % INCREMENT === 1n;

  beforeAll(async () => {
    pair = await startPrivatePair(engine.binary);
    for (const url of roots()) await sqlOn(url, ...SERVING_GRANTS, ...ADMIN_GRANTS);
    const admin = await startInProcess(as('tk_serve', 'serve-pass'), { adminBackends: as('tk_admin', 'admin-pass') });
    try {
      expect(await putSequence(admin.url, SEQUENCE, { blockSize: Number(BLOCK) })).toBe(201);
    } finally {
      await admin.close();
    }
    for (let i = 0; i < 2; i++) servers.push(await startInProcess(as('tk_serve', 'serve-pass')));
  }, 120_000);
  afterAll(async () => {
    for (const s of servers) await s.close();
    await pair?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('restores while two front ends serve: every run exits 0, no counter goes back, no ID twice, A still serves', async () => {
    const ledger = new IdLedger();
    const load = startLoad(
      ledger,
      servers.map((s, i) => ({ url: s.url, name: `front-${i + 1}` })),
      SEQUENCE,
      6,
    );
    try {
      await sleep(1000);
      const file = join(dir, 'ticketd-a.sql');
      writeFileSync(file, dump(engine.binary, pair.a.port));
      await sleep(1500);
      const runs: string[] = [];
      for (let i = 0; i < 5; i++) {
        const before = await counterOf(roots()[0]!);
        const run = await restore('A', file);
        expect(run.stderr).toBe('');
        expect(run.status).toBe(0);
        expect(run.stdout).toMatch(/^restored mysql:\/\/127\.0\.0\.1:\d+\/ticketd: /m);
        expect(await counterOf(roots()[0]!)).toBeGreaterThanOrEqual(before);
        runs.push(run.stdout.trim().split('\n').at(-1)!);
      }
      expect(await databases(roots()[0]!)).not.toContain('ticketd_restore');
      const acknowledgedBefore = ledger.acknowledged;
      const fromABefore = [...ledger.ids()].filter(fromA).length;
      await sleep(1500);
      await load.stop();
      const fromAAfter = [...ledger.ids()].filter(fromA).length;
      console.log(
        `backends restore under load [${engine.name}]: 5 restores of A, ${ledger.acknowledged} IDs acknowledged, ${ledger.repeats.length} repeated, ` +
          `${ledger.acknowledged - acknowledgedBefore} after the last restore (${fromAAfter - fromABefore} from A); last run: ${runs.at(-1)}`,
      );
      expect(ledger.repeats).toEqual([]);
      expect(ledger.acknowledged - acknowledgedBefore).toBeGreaterThan(0);
      expect(fromAAfter).toBeGreaterThan(fromABefore);
    } finally {
      await load.stop();
    }
  }, 120_000);

  it('brings back a ticket table dropped by mistake, its counter at the dump’s, with no ID twice', async () => {
    const ledger = new IdLedger();
    const load = startLoad(
      ledger,
      servers.map((s, i) => ({ url: s.url, name: `front-${i + 1}` })),
      SEQUENCE,
      4,
    );
    const file = join(dir, 'ticketd-a-2.sql');
    try {
      await sleep(1000);
      const text = dump(engine.binary, pair.a.port);
      writeFileSync(file, text);
      // The dump's own counter: the front ends take tickets after it was taken.
      const dumped = BigInt(
        new RegExp(`CREATE TABLE \`tickets_${SEQUENCE}\`[^;]*AUTO_INCREMENT=(\\d+)`).exec(text)?.[1] ?? '0',
      );
      expect(dumped).toBeGreaterThan(1n);
      await sleep(500);
      // The hazard docs/operating.md names: a dropped ticket table would start again at 1.
      await sqlOn(roots()[0]!, `DROP TABLE tickets_${SEQUENCE}`);
      await sleep(500);
      const run = await restore('A', file);
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect(run.stdout).toContain(`created tickets_${SEQUENCE}`);
      expect(await counterOf(roots()[0]!)).toBeGreaterThanOrEqual(dumped);
      await sleep(1500);
    } finally {
      await load.stop();
    }
    console.log(
      `dropped ticket table restored [${engine.name}]: ${ledger.acknowledged} IDs acknowledged, ${ledger.repeats.length} repeated`,
    );
    expect(ledger.repeats).toEqual([]);
    expect(ledger.acknowledged).toBeGreaterThan(0);
  }, 120_000);

  it('refuses a dump that does not load, naming the statement, and leaves the live database as it was', async () => {
    const file = join(dir, 'broken.sql');
    writeFileSync(file, 'CREATE TABLE ticketd_planted (x INT);\nINSERT INTO nowhere VALUES (1);\n');
    const before = await counterOf(roots()[0]!);
    const run = await restore('A', file);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /^ticketd: .*statement 2 of 2 failed in the staging database.*\(TICKETD_RESTORE_REFUSED\)$/,
    );
    // Nothing of the dump reached the live database (the front ends may still move the counter forward).
    expect(await tablesOf(roots()[0]!)).not.toContain('ticketd_planted');
    expect(await counterOf(roots()[0]!)).toBeGreaterThanOrEqual(before);
    expect(await databases(roots()[0]!)).not.toContain('ticketd_restore');
    const unknown = await restore('Z', file);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/backend "Z" is not among TICKETD_BACKENDS: give its letter \(A, B\) or its URL/);
  }, 60_000);
});
