/**
 * Snowflake next() waits for a lease, alike in the Node, Python and Java clients
 * (docs/snowflake.md, "Waiting for a lease"): real holder processes of each client, minting with
 * the waiting next(), against two ticketd front ends on the shared backends.
 *
 * - A holder paused (SIGSTOP) past its TTL, in a pool the pause left full: on SIGCONT its next()
 *   ends the old lease, waits through the full pool (take-failed, TICKETD_POOL_EXHAUSTED) and
 *   returns IDs of a new lease; never an error, never an ID of the old lease after the pause.
 * - A full pool with a short lease wait: next() throws TICKETD_CLIENT_NO_LEASE, its cause's codes
 *   naming TICKETD_POOL_EXHAUSTED, after taking again (take-failed events); once a worker ID is
 *   released the same holder's next() goes on with it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningTicketd } from '../../src/server.js';
import { holderFactory, holdersMissing, type ClientLanguage, type HolderFactory } from '../support/client-holders.js';
import {
  overlappingLeases,
  readLeaseFiles,
  repeatedIds,
  timestampOf,
  type Holder,
  type HolderEvent,
} from '../support/snowflake-fleet.js';
import { sharedBackends, startInProcess } from '../support/ticketd.js';
import { poolName, putPool } from '../support/worker-pools.js';
import { sleep } from '../support/id-ledger.js';

const LANGUAGES: ClientLanguage[] = ['node', 'python', 'java'];
const TTL_MS = 1500;
const MAX_SKEW_MS = 200;

function ofType(events: readonly HolderEvent[], type: string, since = 0): HolderEvent[] {
  return events.filter((e) => e.type === type && e.at >= since);
}

describe.each(LANGUAGES)('Snowflake next() waits for a lease: the %s client', (language) => {
  const missing = holdersMissing(language);
  if (missing !== undefined) {
    if (process.env.CI !== undefined)
      it(`needs the ${language} client's toolchain (CI is set, so this fails)`, () => {
        throw new Error(missing);
      });
    else console.log(`snowflake lease wait, ${language} client: not run: ${missing}`);
    return;
  }
  const servers: RunningTicketd[] = [];
  const holders: Holder[] = [];
  const dirs: string[] = [];
  let urls: string[];
  let factory: HolderFactory;
  let node: HolderFactory;

  function scratch(): string {
    const d = mkdtempSync(join(tmpdir(), `ticketd-lease-wait-${language}-`));
    dirs.push(d);
    return d;
  }

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) servers.push(await startInProcess(sharedBackends()));
    urls = servers.map((s) => s.url);
    factory = await holderFactory(language, scratch());
    node = await holderFactory('node', scratch());
  }, 180_000);

  afterEach(async () => {
    await Promise.all(holders.splice(0).map((h) => h.stop()));
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  function start(
    f: HolderFactory,
    dir: string,
    name: string,
    pool: string,
    mode: 'sync' | 'next',
    waitMs?: number,
  ): Holder {
    const h = f.start(dir, name, pool, urls, mode, waitMs);
    holders.push(h);
    return h;
  }

  it('paused past its TTL in a pool the pause left full: next() waits, then mints on a new lease, never on the old one', async () => {
    const pool = poolName(`pause_${language}`);
    expect((await putPool(urls[0]!, pool, { workerBits: 1, ttlMs: TTL_MS, maxSkewMs: MAX_SKEW_MS })).status).toBe(201);
    const dir = scratch();
    const paused = start(factory, dir, 'paused', pool, 'next');
    const firstLease = await paused.waitFor('leased', 30_000);
    // The other worker ID, held throughout: when the paused one's lease runs out, the pool is full
    // until its worker ID's reuse delay is over.
    start(node, dir, 'blocker', pool, 'sync');
    await ofTypeSoon(holders[1]!, 'leased');
    await sleep(300);
    paused.signal('SIGSTOP');
    const pausedAt = Date.now();
    // Past the TTL (its last renewal was at most a third of it before the pause), and before the
    // reuse delay (at least TTL + maxSkewMs after the lease's end) frees the worker ID.
    await sleep(TTL_MS + 700);
    paused.signal('SIGCONT');
    const resumedAt = Date.now();
    const second = await paused.waitFor('leased', 15_000, resumedAt - 50);
    await sleep(1000);
    await paused.stop();

    const ended = ofType(paused.events, 'lease-ended', resumedAt - 50);
    const takeFailed = ofType(paused.events, 'take-failed', resumedAt - 50);
    const errors = ofType(paused.events, 'error');
    const files = readLeaseFiles(dir);
    const { total, repeats } = repeatedIds(files);
    const oldFile = files.find((f) => f.holder === 'paused' && f.epoch === BigInt(firstLease.epoch as string));
    const newFile = files.find((f) => f.holder === 'paused' && f.epoch === BigInt(second.epoch as string));
    const oldLatest = Math.max(...[...(oldFile?.ids ?? [])].map(timestampOf));
    console.log(
      `lease wait, ${language}: paused ${resumedAt - pausedAt} ms (TTL ${TTL_MS}); on waking ${ended.length} lease-ended, ${takeFailed.length} take-failed (${[...new Set(takeFailed.flatMap((e) => e.codes as string[]))].join(', ')}), a new lease ${second.at - resumedAt} ms after SIGCONT; ${errors.length} errors; ${total} IDs, ${repeats.length} repeated; old lease's last timestamp ${oldLatest - pausedAt} ms after the pause, new lease ${newFile?.ids.length ?? 0} IDs`,
    );
    // The pause took hold: the lease ran out, and the pool was full when it woke.
    expect(ended.length).toBe(1);
    expect(takeFailed.length).toBeGreaterThan(0);
    expect(takeFailed.every((e) => (e.codes as string[]).includes('TICKETD_POOL_EXHAUSTED'))).toBe(true);
    // What the issue asks: no error from next(), a new lease, nothing more on the old one.
    expect(errors).toEqual([]);
    expect(BigInt(second.epoch as string)).toBeGreaterThan(BigInt(firstLease.epoch as string));
    expect(oldLatest).toBeLessThanOrEqual(pausedAt + 20);
    expect(newFile?.ids.length ?? 0).toBeGreaterThan(0);
    expect(Math.min(...[...newFile!.ids].map(timestampOf))).toBeGreaterThan(pausedAt);
    expect(repeats).toEqual([]);
    expect(overlappingLeases(files)).toEqual([]);
  }, 90_000);

  it('a full pool: next() tries again until its lease wait is over, throws TICKETD_CLIENT_NO_LEASE (cause TICKETD_POOL_EXHAUSTED), and goes on once a worker ID is free', async () => {
    const pool = poolName(`full_${language}`);
    expect((await putPool(urls[0]!, pool, { workerBits: 1, ttlMs: 3000, maxSkewMs: MAX_SKEW_MS })).status).toBe(201);
    const dir = scratch();
    const blockers = [start(node, dir, 'b1', pool, 'sync'), start(node, dir, 'b2', pool, 'sync')];
    await Promise.all(blockers.map((b) => ofTypeSoon(b, 'leased')));
    const waiting = start(factory, dir, 'waiting', pool, 'next', 2500);
    const refused = await waiting.waitFor('error', 60_000);
    const takeFailed = ofType(waiting.events, 'take-failed').filter((e) => e.at <= refused.at);
    await blockers[0]!.stop();
    const leased = await waiting.waitFor('leased', 15_000);
    await sleep(500);
    await waiting.stop();
    const files = readLeaseFiles(dir);
    const mine = files.filter((f) => f.holder === 'waiting').reduce((n, f) => n + f.ids.length, 0);
    console.log(
      `full pool, ${language}: ${takeFailed.length} take-failed over ${takeFailed.length > 0 ? refused.at - takeFailed[0]!.at : 0} ms, then ${String(refused.code)} (cause ${JSON.stringify(refused.causeCodes)}); worker ${String(leased.workerId)} leased ${leased.at - refused.at} ms later once released, ${mine} IDs`,
    );
    expect(refused.code).toBe('TICKETD_CLIENT_NO_LEASE');
    expect(refused.causeCodes).toContain('TICKETD_POOL_EXHAUSTED');
    expect(String(refused.message)).toMatch(/within 2500 ms/);
    // It tried again while it waited (once a second), rather than giving up at the first 503.
    expect(takeFailed.length).toBeGreaterThanOrEqual(2);
    expect(refused.at - takeFailed[0]!.at).toBeGreaterThanOrEqual(2000);
    expect(mine).toBeGreaterThan(0);
    expect(repeatedIds(files).repeats).toEqual([]);
    expect(overlappingLeases(files)).toEqual([]);
  }, 120_000);
});

function ofTypeSoon(h: Holder, type: string): Promise<HolderEvent> {
  return h.waitFor(type, 30_000);
}
