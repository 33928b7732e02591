import mysql, { type RowDataPacket } from 'mysql2/promise';
import type { RunningTicketd } from '../../src/server.js';
import { ADMIN_GRANTS, SERVING_GRANTS, withAccount } from '../support/accounts.js';
import { describeEachEngine } from '../support/engines.js';
import {
  capturingLogger,
  metricSum,
  putSequence,
  runCliAsync,
  sqlOn,
  startInProcess,
  startPrivatePair,
  TEST_ADMIN_TOKEN,
} from '../support/ticketd.js';
import { poolName, putPool, send, takeLease } from '../support/worker-pools.js';

// The GRANTs docs/operating.md documents ("Accounts and GRANTs"), on both engines: a serving
// account and an admin account. Every feature runs on them, and check proves them.
const GRANTS = [
  ...SERVING_GRANTS,
  ...ADMIN_GRANTS,
  // What the trial's account had: no DELETE, so no REPLACE.
  "CREATE USER IF NOT EXISTS 'tk_short'@'%' IDENTIFIED BY 'short-pass'",
  "GRANT SELECT, INSERT ON ticketd.* TO 'tk_short'@'%'",
];

describeEachEngine('least-privilege accounts', (engine) => {
  let pair: Awaited<ReturnType<typeof startPrivatePair>>;
  const roots = (): string[] => pair.backendsUrl.split(',');
  const as = (user: string, pass: string): string => withAccount(pair.backendsUrl, user, pass);
  let serving: RunningTicketd;
  let withAdmin: RunningTicketd;
  const opened: RunningTicketd[] = [];

  beforeAll(async () => {
    pair = await startPrivatePair(engine.binary);
    for (const url of roots()) await sqlOn(url, ...GRANTS);
    serving = await startInProcess(as('tk_serve', 'serve-pass'));
    withAdmin = await startInProcess(as('tk_serve', 'serve-pass'), { adminBackends: as('tk_admin', 'admin-pass') });
    opened.push(serving, withAdmin);
  }, 120_000);
  afterAll(async () => {
    for (const s of opened) await s.close();
    await pair?.dispose();
  });

  it('the serving account issues IDs and claims them with INSERT, DELETE and SELECT alone', async () => {
    const res = await fetch(`${serving.url}/v1/sequences/default/ids?count=100`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { ids: string[] }).ids).toHaveLength(100);
  });

  it('the serving account issues an opaque and a strict sequence the admin account created', async () => {
    expect(await putSequence(withAdmin.url, 'lp_opaque', { blockSize: 100, ids: 'opaque' })).toBe(201);
    expect(await putSequence(withAdmin.url, 'lp_strict', { blockSize: 1, ids: 'strict' })).toBe(201);
    const opaque = await fetch(`${serving.url}/v1/sequences/lp_opaque/ids?count=10`, { method: 'POST' });
    expect(opaque.status).toBe(200);
    // Strict leases and bounds are written with REPLACE, never UPDATE: the serving account has no UPDATE.
    const strict: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${serving.url}/v1/sequences/lp_strict/next`);
      expect(res.status).toBe(200);
      strict.push(((await res.json()) as { id: string }).id);
    }
    const values = strict.map(BigInt);
    expect(values.every((v, i) => i === 0 || v > values[i - 1]!)).toBe(true);
  });

  it('the serving account takes, renews and releases worker-ID leases with the same grants', async () => {
    const pool = poolName('least_priv');
    expect((await putPool(serving.url, pool, { workerBits: 2 })).status).toBe(201);
    const lease = await takeLease(serving.url, pool, 'pod-a');
    expect(lease.status).toBe(200);
    const base = `${serving.url}/v1/worker-pools/${pool}/leases/${String(lease.body.workerId)}`;
    expect((await send(`${base}/renew`, { epoch: lease.body.epoch })).status).toBe(200);
    expect((await send(`${base}/release`, { epoch: lease.body.epoch, lastUsedMs: Date.now() })).status).toBe(200);
  });

  it('schema changes need the admin account: refused on the serving one, done with TICKETD_ADMIN_BACKENDS', async () => {
    const refused = await fetch(`${serving.url}/v1/sequences/least_priv`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ blockSize: 10 }),
    });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(
      /CREATE command denied to user 'tk_serve'.*set TICKETD_ADMIN_BACKENDS/,
    );
    expect(await putSequence(withAdmin.url, 'least_priv', { blockSize: 10 })).toBe(201);
    const issued = await fetch(`${withAdmin.url}/v1/sequences/least_priv/ids?count=5`, { method: 'POST' });
    expect(issued.status).toBe(200);
  });

  it('init with only the serving account fails with the reason; with --admin-backends it succeeds', async () => {
    const denied = await runCliAsync(['init'], { TICKETD_BACKENDS: as('tk_serve', 'serve-pass') });
    expect(denied.status).toBe(1);
    expect(denied.stderr).toMatch(/^ticketd: .*denied to user 'tk_serve'/);
    const ok = await runCliAsync(['init', '--admin-backends', as('tk_admin', 'admin-pass')], {
      TICKETD_BACKENDS: as('tk_serve', 'serve-pass'),
    });
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
  });

  it('check proves the documented accounts for every feature in use, and names what a short account lacks', async () => {
    const ok = await runCliAsync(['check'], {
      TICKETD_BACKENDS: as('tk_serve', 'serve-pass'),
      TICKETD_ADMIN_BACKENDS: as('tk_admin', 'admin-pass'),
    });
    expect(`${ok.stdout}${ok.stderr}`).not.toMatch(/cannot|problem/);
    expect(ok.status).toBe(0);
    const short = await runCliAsync(['check'], { TICKETD_BACKENDS: as('tk_short', 'short-pass') });
    expect(short.status).toBe(1);
    expect(short.stdout).toMatch(
      /problem: backend .*: the serving account cannot issue IDs: it lacks INSERT and DELETE \(REPLACE INTO the ticket tables\).*DELETE command denied/,
    );
    // Strict sequences exist (the test above made one): they need the locking read and REPLACE.
    expect(short.stdout).toMatch(/problem: backend .*: the serving account cannot serve strict sequences/);
    if (engine.binary.flavor === 'mysql')
      expect(short.stdout).toMatch(/SELECT … FOR UPDATE on ticketd_strict_sequences/);
  });

  it('a missing privilege at run time is the state refused, not an outage: readiness holds still, no down/up lines, its own metric', async () => {
    const { logger, lines } = capturingLogger();
    const short = await startInProcess(as('tk_short', 'short-pass'), {}, logger);
    opened.push(short);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await fetch(`${short.url}/v1/sequences/default/ids?count=1`, { method: 'POST' });
      await res.arrayBuffer();
      const ready = await fetch(`${short.url}/readyz`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
      const body = (await ready.json()) as { backends: { state: string }[] };
      statuses.push(ready.status);
      if (i > 0) expect(body.backends.map((b) => b.state)).toEqual(['refused', 'refused']);
      await new Promise((r) => setTimeout(r, 150));
    }
    // The first answer may come before any refusal; after it, never ready and never flapping.
    expect(statuses.slice(1).every((s) => s === 503)).toBe(true);
    expect(await metricSum(short.url, 'ticketd_backend_refused')).toBe(2);
    expect(await metricSum(short.url, 'ticketd_backend_up')).toBe(2);
    const messages = lines.map((l) => String(l.msg));
    expect(messages.filter((m) => /^backend (open|down|up)$/.test(m))).toEqual([]);
    expect(messages.filter((m) => m.startsWith('backend refused: missing privilege'))).toHaveLength(2);
  });

  it('a counter behind a used ticket is advanced by the serving account (INSERT and DELETE, no ALTER): counted, and no refusal', async () => {
    const { logger, lines } = capturingLogger();
    const front = await startInProcess(as('tk_serve', 'serve-pass'), {}, logger);
    opened.push(front);
    expect(await putSequence(withAdmin.url, 'lp_behind', { blockSize: 10 })).toBe(201);
    const [a, b] = roots() as [string, string];
    // A's class (offset 1 of 16) used far above A's counter, as B's claims say after A was restored.
    const before = (await (
      await fetch(`${front.url}/readyz`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })
    ).json()) as { backends: { identity: string }[] };
    await sqlOn(
      b,
      `INSERT INTO ticketd_claims (sequence, ticket, stripe_increment, stripe_residue, backend_id) VALUES ('lp_behind', 16001, 16, 1, '${before.backends[0]!.identity}')`,
    );
    const fromA: bigint[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${front.url}/v1/sequences/lp_behind/ids?count=10`, { method: 'POST' });
      expect(res.status).toBe(200);
      for (const id of ((await res.json()) as { ids: string[] }).ids)
        if ((BigInt(id) / 10n) % 16n === 1n) fromA.push(BigInt(id) / 10n);
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(await metricSum(front.url, 'ticketd_regressions_total', { action: 'advanced' })).toBeGreaterThan(0);
    // A's counter is past the used ticket, and what A served since lies above it.
    const conn = await mysql.createConnection(a);
    const [rows] = await conn.query<RowDataPacket[]>('SHOW CREATE TABLE tickets_lp_behind').finally(() => conn.end());
    expect(BigInt(/AUTO_INCREMENT=(\d+)/.exec(String(rows[0]?.['Create Table']))?.[1] ?? '0')).toBeGreaterThan(16001n);
    expect(fromA.length).toBeGreaterThan(0);
    expect(fromA.every((t) => t > 16001n)).toBe(true);
    const status = (await (
      await fetch(`${front.url}/readyz`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })
    ).json()) as { backends: { state: string; lastError?: string }[] };
    expect(status.backends.map((x) => x.state)).toEqual(['up', 'up']);
    const messages = lines.map((l) => String(l.msg));
    expect(messages.filter((m) => /^backend (open|down)$/.test(m))).toEqual([]);
    expect(messages.filter((m) => m.startsWith('backend refused: missing privilege'))).toEqual([]);
  });
});
