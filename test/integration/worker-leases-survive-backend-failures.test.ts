/**
 * Worker-ID leases while a backend is restored from a backup taken seconds before, and while a
 * backend is killed and started again: leases are taken and renewed through two front ends all
 * along, and no two leases of one worker ID are ever held at the same moment (by the recorded
 * grants and renewals). The owner that forgot its leases meets its peer's claims instead.
 */
import type { LocalPair } from '../../src/launcher/local-pair.js';
import type { RunningTicketd } from '../../src/server.js';
import { LeaseLedger } from '../support/lease-ledger.js';
import { restoreBackup, takeBackup } from '../support/regressions.js';
import { capturingLogger, metricSum, runCliAsync, startInProcess, startPrivatePair } from '../support/ticketd.js';
import { putPool, send } from '../support/worker-pools.js';

const TTL_MS = 2000;
const RENEW_EVERY_MS = 500;

describe('worker leases when a backend fails', () => {
  let pair: LocalPair & { dispose(): Promise<void> };
  const servers: RunningTicketd[] = [];
  const logs = [capturingLogger(), capturingLogger()];

  beforeAll(async () => {
    pair = await startPrivatePair();
    for (const { logger } of logs) servers.push(await startInProcess(pair.backendsUrl, {}, logger));
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await pair?.dispose();
  });

  it('never grants a worker ID held when its owner was restored from a backup taken seconds before', async () => {
    const pool = 'restored_pool';
    expect((await putPool(servers[0]!.url, pool, { workerBits: 3, ttlMs: TTL_MS, maxSkewMs: 200 })).status).toBe(201);
    const ledger = new LeaseLedger(
      pool,
      servers.map((s) => s.url),
    );
    try {
      const backup = await takeBackup(pair.a.url);
      // Six of the eight worker IDs leased after the backup, and kept renewed.
      for (let i = 0; i < 6; i++) expect((await ledger.take(`before-${i}`, RENEW_EVERY_MS)).status).toBe(200);
      await restoreBackup(pair.a.url, backup);
      // A now holds no record of its leases; B's claims still do. Takes go on through both front ends.
      const after: { status: number; code?: string }[] = [];
      for (let i = 0; i < 12; i++) after.push(await ledger.take(`after-${i}`, RENEW_EVERY_MS));
      await sleep(1000);
      const granted = after.filter((a) => a.status === 200).length;
      const refusedByClaims = (
        await Promise.all(
          servers.map((s) => metricSum(s.url, 'ticketd_worker_leases_refused_total', { pool, reason: 'claimed' })),
        )
      ).reduce((a, b) => a + b, 0);
      console.log(
        `owner restored: ${ledger.taken} leases taken (${granted} after the restore), ${refusedByClaims} worker IDs refused by a claim, statuses ${JSON.stringify(Object.fromEntries(ledger.statuses))}`,
      );
      expect(ledger.overlaps()).toEqual([]);
      // One warning per episode, not one per worker ID a claim refused.
      const claimWarnings = logs.map(
        (l) =>
          l.lines.filter((line) => Number(line.level) === 40 && String(line.msg).includes('held by a claim')).length,
      );
      console.log(`owner restored: warnings of worker IDs held by a claim per front end: ${claimWarnings.join(', ')}`);
      expect(refusedByClaims).toBeGreaterThan(10);
      for (const n of claimWarnings) expect(n).toBeLessThanOrEqual(1);
      // Exactly the two worker IDs nobody held were granted; the rest of the takes found the pool exhausted.
      expect(granted).toBe(2);
      expect(after.filter((a) => a.code === 'TICKETD_POOL_EXHAUSTED').length).toBe(10);
      expect(refusedByClaims).toBeGreaterThan(0);
      // The holders whose owner forgot them are told at their next renewal: they stop and take anew.
      expect(ledger.statuses.get('renew 409 TICKETD_LEASE_LOST') ?? 0).toBeGreaterThan(0);
    } finally {
      ledger.stop();
    }
  });

  it('keeps granting and renewing the live backend’s worker IDs while the other is killed, and never twice', async () => {
    const pool = 'killed_pool';
    const created = await putPool(servers[0]!.url, pool, { workerBits: 3, ttlMs: TTL_MS, maxSkewMs: 200 });
    expect(created.status).toBe(201);
    // Worker w belongs to owners[w mod owners.length]; A's offset is 1 (sql/backend-a.cnf).
    const owners = created.body.owners as string[];
    const ownedByA = (w: number): boolean => owners[w % owners.length] === '1';
    const aOwns = [...Array(8).keys()].filter(ownedByA).length;
    const ledger = new LeaseLedger(
      pool,
      servers.map((s) => s.url),
    );
    try {
      // Three leases before the kill, so that A owns at least one free worker ID whichever owners they came from.
      const before: number[] = [];
      for (let i = 0; i < 3; i++) {
        const taken = await ledger.take(`before-${i}`, RENEW_EVERY_MS);
        expect(taken.status).toBe(200);
        before.push(taken.workerId!);
      }
      const freeOnA = aOwns - before.filter(ownedByA).length;
      expect(freeOnA).toBeGreaterThan(0);
      pair.b.signal('SIGKILL');
      await pair.b.exited();
      const during: number[] = [];
      const deadline = Date.now() + TTL_MS + 1500;
      let i = 0;
      while (Date.now() < deadline) {
        during.push((await ledger.take(`during-${i++}`, RENEW_EVERY_MS)).status);
        await sleep(200);
      }
      // While B is down, exactly A's free worker IDs are granted (A keeps renewing its own), and no more.
      expect(during.filter((s) => s === 200).length).toBe(freeOnA);
      const unclaimed = (
        await Promise.all(servers.map((s) => metricSum(s.url, 'ticketd_worker_leases_unclaimed_total', { pool })))
      ).reduce((a, b) => a + b, 0);
      expect(unclaimed).toBeGreaterThan(0);
      await pair.b.restart();
      await sleep(TTL_MS + 2500);
      for (let j = 0; j < 4; j++) await ledger.take(`restarted-${j}`, RENEW_EVERY_MS);
      await sleep(1000);
      console.log(
        `backend B killed: ${ledger.taken} leases (${freeOnA} of A's free at the kill, all granted while B was down), ${unclaimed} unclaimed grants or renewals, statuses ${JSON.stringify(Object.fromEntries(ledger.statuses))}`,
      );
      expect(ledger.overlaps()).toEqual([]);
      // A backend failing under a call is a 503 to retry, never a 500.
      expect([...ledger.statuses.keys()].filter((k) => / 500 /.test(k))).toEqual([]);
      const state = await send(`${servers[0]!.url}/v1/worker-pools/${pool}`, undefined, { method: 'GET' });
      expect(state.body.unanswered).toEqual([]);
      expect(state.body.leased as number).toBeLessThanOrEqual(8);
    } finally {
      ledger.stop();
      // Whatever failed above, the next case finds both backends up.
      if (pair.b.pid === undefined) await pair.b.restart();
    }
  });

  it('holds every worker ID after every backend was restored, once fence --apply ran, and the next holders start above it', async () => {
    const pool = 'everywhere_pool';
    expect((await putPool(servers[0]!.url, pool, { workerBits: 2, ttlMs: TTL_MS, maxSkewMs: 200 })).status).toBe(201);
    const ledger = new LeaseLedger(
      pool,
      servers.map((s) => s.url),
    );
    try {
      const backups = [await takeBackup(pair.a.url), await takeBackup(pair.b.url)];
      for (let i = 0; i < 4; i++) expect((await ledger.take(`before-${i}`, RENEW_EVERY_MS)).status).toBe(200);
      await restoreBackup(pair.a.url, backups[0]!);
      await restoreBackup(pair.b.url, backups[1]!);
      // Nothing in the fleet remembers the four leases: without the fence, a take grants a held worker ID.
      expect((await ledger.take('unfenced', RENEW_EVERY_MS)).status).toBe(200);
      const hazard = ledger.overlaps();
      expect(hazard.length).toBeGreaterThan(0);
      expect(hazard.every((o) => o.includes('unfenced'))).toBe(true);
      const env = { TICKETD_BACKENDS: pair.backendsUrl };
      const plan = await runCliAsync(['fence'], env);
      expect(plan.stdout).toContain(
        `worker pool ${pool}: every worker ID held ${(TTL_MS + TTL_MS + 200) / 1000} s from the fence, its next holders above the fence's time + ${(TTL_MS + 200) / 1000} s`,
      );
      const fencedAt = Date.now();
      const applied = await runCliAsync(['fence', '--apply'], env);
      expect(applied.stderr).toBe('');
      expect(applied.stdout).toMatch(/fenced \d+ sequences? and \d+ worker pools?: /);
      expect((await ledger.take('too-soon', RENEW_EVERY_MS)).code).toBe('TICKETD_POOL_EXHAUSTED');
      await sleep(TTL_MS + TTL_MS + 200 + 300);
      const after = await ledger.take('after-fence', RENEW_EVERY_MS);
      expect(after.status).toBe(200);
      const lease = await send(`${servers[1]!.url}/v1/worker-pools/${pool}/leases`, { holder: 'after-fence-2' });
      expect(lease.body.highWaterMs as number).toBeGreaterThanOrEqual(fencedAt + TTL_MS + 200);
      // Only the unfenced take overlaps anything.
      expect(ledger.overlaps().filter((o) => !o.includes('unfenced'))).toEqual([]);
    } finally {
      ledger.stop();
    }
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
