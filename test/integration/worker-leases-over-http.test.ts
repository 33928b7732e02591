/**
 * Worker pools and leases over HTTP on the shared pair: creation, exhaustion without wrap-around,
 * renewal and release by epoch, the reuse delay judged by the database clock, and client tokens.
 */
import mysql from 'mysql2/promise';
import type { RunningTicketd } from '../../src/server.js';
import { sharedBackends, startInProcess } from '../support/ticketd.js';
import { poolName, putPool, send, takeLease } from '../support/worker-pools.js';

const POOL_TOKEN = 'pool-token-0123456789';

describe('worker leases over HTTP', () => {
  let server: RunningTicketd;
  let guardedPool: string;

  beforeAll(async () => {
    guardedPool = poolName('guarded');
    server = await startInProcess(sharedBackends(), { clientTokens: `${guardedPool}:${POOL_TOKEN}` });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('creates a pool on every backend: 201, then 200 for the same settings, 409 for others, 400 for bad ones', async () => {
    const name = poolName('create');
    const created = await putPool(server.url, name, { workerBits: 4, ttlMs: 5000 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name,
      workerBits: 4,
      size: 16,
      ttlMs: 5000,
      maxSkewMs: 1000,
      reuseDelayMs: 6000,
    });
    expect((created.body.owners as string[]).length).toBe(2);
    expect((await putPool(server.url, name, { workerBits: 4, ttlMs: 5000 })).status).toBe(200);
    const conflict = await putPool(server.url, name, { workerBits: 5, ttlMs: 5000 });
    expect(conflict.status).toBe(409);
    expect(conflict.body.code).toBe('TICKETD_POOL_CONFLICT');
    const bad = await putPool(server.url, poolName('bad'), {
      workerBits: 17,
      ttlMs: 10,
      reuseDelayMs: 5,
      color: 'red',
    });
    expect(bad.status).toBe(400);
    expect(String(bad.body.detail)).toMatch(
      /unknown field "color".*workerBits must be an integer from 1 to 16; got 17; ttlMs must be an integer from 1000 to 600000; got 10$/,
    );
    const unauthorised = await send(
      `${server.url}/v1/worker-pools/${poolName('nope')}`,
      { workerBits: 4 },
      { method: 'PUT' },
    );
    expect(unauthorised.status).toBe(401);
    expect((await send(`${server.url}/v1/worker-pools/${poolName('missing')}/leases`, {})).body.code).toBe(
      'TICKETD_POOL_NOT_FOUND',
    );
    const listed = (await (await fetch(`${server.url}/v1/worker-pools`)).json()) as { pools: { name: string }[] };
    expect(listed.pools.map((p) => p.name)).toContain(name);
  });

  it('leases every worker ID once, then answers 503 TICKETD_POOL_EXHAUSTED with Retry-After, never a wrap-around', async () => {
    const name = poolName('exhaust');
    await putPool(server.url, name, { workerBits: 3, ttlMs: 30_000 });
    const workers: number[] = [];
    for (let i = 0; i < 8; i++) {
      const lease = await takeLease(server.url, name, `holder-${i}`);
      expect(lease.status).toBe(200);
      workers.push(lease.body.workerId as number);
      expect(BigInt(lease.body.epoch as string)).toBeGreaterThan(0n);
      expect(lease.body.expiresInMs).toBe(30_000);
    }
    expect([...workers].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const refused = await takeLease(server.url, name, 'one-too-many');
    expect(refused.status).toBe(503);
    expect(refused.body.code).toBe('TICKETD_POOL_EXHAUSTED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const state = await send(`${server.url}/v1/worker-pools/${name}`, undefined, { method: 'GET', admin: true });
    expect(state.body).toMatchObject({ leased: 8, cooling: 0, free: 0, redacted: false });
    expect((state.body.leases as { holder: string }[]).map((l) => l.holder).sort()).toEqual(
      workers.map((_, i) => `holder-${i}`).sort(),
    );
    const open = await send(`${server.url}/v1/worker-pools/${name}`, undefined, { method: 'GET' });
    expect(open.body).toMatchObject({ leased: 8, leases: null, redacted: true });
  });

  it('renews only with the lease epoch, and frees a released worker ID at once, above its last timestamp', async () => {
    const name = poolName('renew');
    await putPool(server.url, name, { workerBits: 1, ttlMs: 2000, maxSkewMs: 100 });
    const first = (await takeLease(server.url, name, 'a')).body;
    const w = first.workerId as number;
    const renewUrl = `${server.url}/v1/worker-pools/${name}/leases/${w}/renew`;
    const renewed = await send(renewUrl, { epoch: first.epoch, skewMs: 3 });
    expect(renewed.status).toBe(200);
    expect(renewed.body.epoch).toBe(first.epoch);
    const wrong = await send(renewUrl, { epoch: String(BigInt(first.epoch as string) + 1n) });
    expect(wrong.status).toBe(409);
    expect(wrong.body.code).toBe('TICKETD_LEASE_LOST');
    expect((await send(renewUrl, { epoch: 'x' })).status).toBe(400);
    // Both worker IDs leased: the next take waits for a release.
    const other = (await takeLease(server.url, name, 'b')).body;
    expect(other.workerId).toBe(1 - w);
    expect((await takeLease(server.url, name, 'c')).status).toBe(503);
    const lastUsedMs = Date.now() + 40;
    const released = await send(`${server.url}/v1/worker-pools/${name}/leases/${w}/release`, {
      epoch: first.epoch,
      lastUsedMs,
    });
    expect(released.status).toBe(200);
    expect((await send(renewUrl, { epoch: first.epoch })).body.code).toBe('TICKETD_LEASE_LOST');
    const again = (await takeLease(server.url, name, 'c')).body;
    expect(again.workerId).toBe(w);
    expect(again.highWaterMs).toBe(lastUsedMs);
    expect(BigInt(again.epoch as string)).toBeGreaterThan(BigInt(first.epoch as string));
  });

  it("tells the owner's clock as of the moment its row lock was granted, not from before a wait on it", async () => {
    const name = poolName('lockwait');
    await putPool(server.url, name, { workerBits: 1, ttlMs: 5000 });
    const lease = (await takeLease(server.url, name, 'a')).body;
    const w = lease.workerId as number;
    // Another session holds the worker's row on every backend (as a cut-off front end's transaction does).
    const sessions = await Promise.all(
      sharedBackends()
        .split(',')
        .map((url) => mysql.createConnection(url)),
    );
    try {
      for (const s of sessions) {
        await s.query('START TRANSACTION');
        await s.query('SELECT epoch FROM ticketd_worker_leases WHERE pool = ? AND worker_id = ? FOR UPDATE', [name, w]);
      }
      const renewing = send(`${server.url}/v1/worker-pools/${name}/leases/${w}/renew`, { epoch: lease.epoch });
      await new Promise((r) => setTimeout(r, 300));
      const releasedAt = Date.now();
      await Promise.all(sessions.map((s) => s.query('COMMIT')));
      const renewed = await renewing;
      expect(renewed.status).toBe(200);
      // A clock read at the statement's start would be about 300 ms before the release.
      expect(renewed.body.serverTimeMs as number).toBeGreaterThanOrEqual(releasedAt - 50);
      expect(renewed.body.serverTimeMs as number).toBeLessThanOrEqual(Date.now());
    } finally {
      await Promise.all(sessions.map((s) => s.end()));
    }
  });

  it('gives an expired worker ID out again only after the reuse delay, with a high-water mark past its expiry', async () => {
    const name = poolName('expire');
    await putPool(server.url, name, { workerBits: 1, ttlMs: 1000, maxSkewMs: 200, reuseDelayMs: 1500 });
    const a = (await takeLease(server.url, name, 'a')).body;
    const b = (await takeLease(server.url, name, 'b')).body;
    expect(new Set([a.workerId, b.workerId]).size).toBe(2);
    const renewB = setInterval(
      () => void send(`${server.url}/v1/worker-pools/${name}/leases/${b.workerId as number}/renew`, { epoch: b.epoch }),
      300,
    );
    try {
      const expiresAt = Date.parse(a.expiresAt as string);
      // Expired (after 1 s) but inside the reuse delay: still refused.
      await sleepUntil(expiresAt + 500);
      expect((await takeLease(server.url, name, 'c')).status).toBe(503);
      const state = await send(`${server.url}/v1/worker-pools/${name}`, undefined, { method: 'GET' });
      expect(state.body).toMatchObject({ leased: 1, cooling: 1 });
      await sleepUntil(expiresAt + 1500 + 100);
      const c = (await takeLease(server.url, name, 'c')).body;
      expect(c.workerId).toBe(a.workerId);
      expect(c.highWaterMs).toBeGreaterThanOrEqual(expiresAt + 200);
    } finally {
      clearInterval(renewB);
    }
  });

  it('issues a pool with client tokens only to a bearer of one', async () => {
    await putPool(server.url, guardedPool, { workerBits: 2 });
    expect((await takeLease(server.url, guardedPool)).status).toBe(401);
    expect(
      (await send(`${server.url}/v1/worker-pools/${guardedPool}/leases`, {}, { token: 'wrong-token-0123456789' }))
        .status,
    ).toBe(403);
    const lease = await send(
      `${server.url}/v1/worker-pools/${guardedPool}/leases`,
      { holder: 'pod-7' },
      { token: POOL_TOKEN },
    );
    expect(lease.status).toBe(200);
    expect(lease.body.holder).toBe('pod-7');
    const badHolder = await send(
      `${server.url}/v1/worker-pools/${guardedPool}/leases`,
      { holder: 'x'.repeat(200) },
      { token: POOL_TOKEN },
    );
    expect(badHolder.status).toBe(400);
  });
});

async function sleepUntil(unixMs: number): Promise<void> {
  const wait = unixMs - Date.now();
  if (wait > 0) await new Promise((done) => setTimeout(done, wait));
}
