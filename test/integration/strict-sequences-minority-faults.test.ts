/**
 * Strict sequences when a minority of the backends is hung or out of reach (docs/strict-sequences.md):
 * three `ticketd serve` processes on three backends of this test's own. A SIGSTOPped backend costs
 * the strict requests nothing that a dead one does not (lease writes settle on the first majority),
 * and a front end cut off from two of the three backends still serves, by forwarding to the live
 * leader that the backend it reaches names. The linearizability checker judges both.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import type { LocalServer } from '../../src/launcher/local-mysql.js';
import { checkLinearizable, describeVerdict, type Operation, type Verdict } from '../support/linearizability.js';
import { strictLoad } from '../support/strict-load.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { metricSum, putSequence, spawnTicketd, startThreeBackends, type ChildTicketd } from '../support/ticketd.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Quantiles of the latencies (ms) of the answers to requests sent within [from, to). */
function latency(
  history: readonly Operation[],
  from: number,
  to: number,
): { p50: number; p90: number; p99: number; max: number; answers: number; text: string } {
  const times = history
    .filter((o) => o.sentAt >= from && o.sentAt < to)
    .map((o) => o.answeredAt - o.sentAt)
    .sort((a, b) => a - b);
  const at = (q: number): number => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? Infinity;
  const [p50, p90, p99, max] = [at(0.5), at(0.9), at(0.99), times.at(-1) ?? Infinity];
  return {
    p50,
    p90,
    p99,
    max,
    answers: times.length,
    text: `p50 ${p50.toFixed(0)} / p90 ${p90.toFixed(0)} / p99 ${p99.toFixed(0)} / max ${max.toFixed(0)} ms over ${times.length} answers`,
  };
}

/** A loopback port on which nothing listens: connections to it are refused. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** Whether a MySQL server answers a new connection within `ms` (a SIGSTOPped one accepts the TCP connection, then says nothing). */
async function answersWithin(url: string, ms: number): Promise<boolean> {
  try {
    const conn = await mysql.createConnection({ uri: url, connectTimeout: ms });
    await conn.end();
    return true;
  } catch {
    return false;
  }
}

describe('strict sequences with a minority of the backends hung or out of reach', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-strict-minority-'));
  const servers: LocalServer[] = [];
  const proxies: TcpProxy[] = [];
  const children: ChildTicketd[] = [];
  let backends = '';

  beforeAll(async () => {
    const started = await startThreeBackends(dir);
    servers.push(...started.servers);
    backends = started.backends;
  }, 120_000);

  afterAll(async () => {
    for (const s of servers) if (s.pid !== undefined) s.signal('SIGCONT');
    await Promise.all(children.map((c) => c.stop('SIGKILL')));
    await Promise.all(proxies.map((p) => p.close()));
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  // The cut-off front end spells its backends through proxies, so it cannot derive the others' peer
  // proof from TICKETD_BACKENDS: the fleet shares a secret, as docs/strict-sequences.md ("Peers") says.
  const spawn = async (over: string): Promise<ChildTicketd> => {
    const child = await spawnTicketd(over, { TICKETD_PEER_SECRET: 'minority-faults-peer-secret' });
    children.push(child);
    return child;
  };

  const judged = (
    label: string,
    history: readonly Operation[],
    statuses: Record<string, number>,
    extra: string,
  ): Verdict => {
    const verdict = checkLinearizable([...history]);
    console.log(`strict, ${label}: ${describeVerdict(verdict)}; statuses ${JSON.stringify(statuses)}; ${extra}`);
    expect(verdict.outOfOrder).toBe(0);
    expect(verdict.repeated).toEqual([]);
    expect(verdict.unsorted).toBe(0);
    return verdict;
  };

  it('one SIGSTOPped backend of three: strict requests stay fast, and the order holds', async () => {
    const fronts = new Map<string, string>();
    for (let i = 1; i <= 3; i++) fronts.set(`fe${i}`, (await spawn(backends)).url);
    const name = `strict_hung_${process.pid}`;
    expect(await putSequence(fronts.get('fe1')!, name, { blockSize: 1, ids: 'strict' })).toBe(201);
    const load = strictLoad(name, () => fronts, { concurrency: 9 });
    await sleep(1500);
    const before = performance.now();
    await sleep(3000);

    const c = servers[2]!;
    const stoppedAt = performance.now();
    c.signal('SIGSTOP');
    try {
      // The fault took hold: the server no longer answers a new connection.
      expect(await answersWithin(c.url, 500)).toBe(false);
      await sleep(4000);
    } finally {
      c.signal('SIGCONT');
    }
    const resumedAt = performance.now();
    expect(await answersWithin(c.url, 2000)).toBe(true);
    await sleep(1000);
    await load.stop();

    const healthy = latency(load.history, before, stoppedAt);
    const hung = latency(load.history, stoppedAt, resumedAt);
    judged(
      'one backend of three SIGSTOPped',
      load.history,
      load.statuses,
      `before the stop ${healthy.text}; while backend c was stopped ${hung.text}`,
    );
    expect(Object.keys(load.statuses)).toEqual(['200']);
    expect(hung.answers).toBeGreaterThan(100);
    // Waiting for the hung backend cost each lease write its 0.5 s query timeout, or stalled them all
    // until the backend woke: the p99 grew by 0.7 to 3.3 s. Judged against the same load just before
    // the stop, so that a machine busy with other work does not decide it (with the fix, -0.1 to
    // +0.2 s in most runs on a shared two-core machine, once +0.66 s).
    expect(hung.p99 - healthy.p99).toBeLessThan(500);
  }, 90_000);

  it('a front end cut off from two of the three backends forwards to the leader the third names', async () => {
    const leader = await spawn(backends);
    const other = await spawn(backends);
    // The third front end reaches backends B and C only through proxies of its own, cut below.
    for (const s of servers.slice(1)) proxies.push(await startTcpProxy(s.port));
    const viaProxies = [
      servers[0]!.url,
      ...servers.slice(1).map((s, i) => s.url.replace(`:${s.port}/`, `:${proxies[i]!.port}/`)),
    ].join(',');
    const cutOff = await spawn(viaProxies);
    const name = `strict_cut_${process.pid}`;
    expect(await putSequence(leader.url, name, { blockSize: 1, ids: 'strict' })).toBe(201);
    // The first front end leads (the first to be asked); the third has not been asked yet, so it knows no leader.
    for (let i = 0; i < 5; i++) expect((await fetch(`${leader.url}/v1/sequences/${name}/next`)).status).toBe(200);
    const shown = (await (await fetch(`${leader.url}/v1/sequences/${name}`)).json()) as {
      leader: { self: boolean } | null;
    };
    expect(shown.leader?.self).toBe(true);

    const nowhere = await deadPort();
    for (const p of proxies) p.retarget(nowhere);
    // The cut took hold: through its proxies, no backend answers.
    for (let i = 1; i <= 2; i++)
      expect(
        await answersWithin(servers[i]!.url.replace(`:${servers[i]!.port}/`, `:${proxies[i - 1]!.port}/`), 1000),
      ).toBe(false);

    const fronts = new Map([
      ['leader', leader.url],
      ['other', other.url],
      ['cut-off', cutOff.url],
    ]);
    const load = strictLoad(name, () => fronts, { concurrency: 9 });
    await sleep(4000);
    await load.stop();
    const viaCutOff = load.history.filter((o) => o.via === 'cut-off').length;
    const forwarded = await metricSum(cutOff.url, 'ticketd_strict_forwarded_requests_total', { sequence: name });
    judged(
      'a front end cut off from a majority',
      load.history,
      load.statuses,
      `${viaCutOff} answers through the cut-off front end, ${forwarded} requests it forwarded`,
    );
    expect(Object.keys(load.statuses)).toEqual(['200']);
    expect(viaCutOff).toBeGreaterThan(50);
    expect(forwarded).toBeGreaterThanOrEqual(viaCutOff);
  }, 90_000);
});
