/**
 * The SDK's Snowflake generator against a real ticketd, with its clocks injected: small steps back
 * are waited out, large ones halt it until the clock passes the last timestamp, skew past the pool's
 * bound stops it, a lease that ran out on the monotonic clock issues nothing more, and close releases.
 */
import {
  ClockMovedBackError,
  ClockSkewError,
  createSnowflake,
  NoLeaseError,
  SnowflakeLayoutError,
  type Snowflake,
  type SnowflakeEvent,
} from 'ticketd-client';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningTicketd } from '../../src/server.js';
import { sharedBackends, startInProcess } from '../support/ticketd.js';
import { poolName, putPool, send, takeLease } from '../support/worker-pools.js';

/** Wall and monotonic clocks that follow the real ones, shifted at will. */
class SteppedClock {
  wallOffset = 0;
  monoOffset = 0;
  wallMs(): number {
    return Date.now() + this.wallOffset;
  }
  monoMs(): number {
    return performance.now() + this.monoOffset;
  }
}

describe('Snowflake generator under clock steps', () => {
  let server: RunningTicketd;
  let pool: string;
  const open: Snowflake[] = [];

  beforeAll(async () => {
    server = await startInProcess(sharedBackends());
    pool = poolName('steps');
    await putPool(server.url, pool, { workerBits: 10, ttlMs: 3000, maxSkewMs: 1000 });
  });

  afterAll(async () => {
    await Promise.all(open.map((s) => s.close()));
    await server?.close();
  });

  function generator(clock: SteppedClock, events: SnowflakeEvent[] = [], extra: object = {}): Snowflake {
    const s = createSnowflake({ urls: [server.url], pool, clock, onEvent: (e) => events.push(e), ...extra });
    open.push(s);
    return s;
  }

  it('waits out a step back of 30 ms: timestamps never go below the last one and no ID repeats', async () => {
    const clock = new SteppedClock();
    const s = generator(clock);
    await s.ready();
    const ids: bigint[] = [];
    for (let i = 0; i < 5000; i++) ids.push(s.nextSync());
    const before = s.decompose(ids[ids.length - 1]!).timestampMs;
    clock.wallOffset = -30;
    const started = performance.now();
    for (let i = 0; i < 20_000; i++) ids.push(s.nextSync());
    for (let i = 0; i < 2000; i++) ids.push(await s.next());
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
    expect(s.decompose(ids[ids.length - 1]!).timestampMs).toBeGreaterThan(before);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('next() in a tight loop never runs past a millisecond’s sequence, nor mixes nextSync() in wrongly', async () => {
    const s = createSnowflake({ urls: [server.url], pool, layout: { timeBits: 41, workerBits: 10, sequenceBits: 2 } });
    open.push(s);
    await s.ready();
    const ids: bigint[] = [];
    for (let i = 0; i < 3000; i++) ids.push(i % 7 === 3 ? s.nextSync() : await s.next());
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
    for (const id of ids) {
      const parts = s.decompose(id);
      expect(parts.workerId).toBe(s.workerId);
      expect(parts.sequence).toBeLessThan(4);
    }
  });

  it('halts on a step back past maxStepBackMs, reports it, and resumes above the last timestamp once the clock passes it', async () => {
    const clock = new SteppedClock();
    const events: SnowflakeEvent[] = [];
    const s = generator(clock, events);
    await s.ready();
    let last = 0n;
    for (let i = 0; i < 100; i++) last = s.nextSync();
    clock.wallOffset = -400;
    // Refused at once, from the first call after the step: not after the rest of the open
    // millisecond's sequence (which froze the time in the IDs without a word).
    const during: bigint[] = [];
    let refused = 0;
    for (let i = 0; i < 70; i++) {
      try {
        during.push(s.nextSync());
      } catch (error) {
        expect(error).toBeInstanceOf(ClockMovedBackError);
        refused++;
      }
    }
    expect([during.length, refused]).toEqual([0, 70]);
    await expect(s.next()).rejects.toBeInstanceOf(ClockMovedBackError);
    // One event for the step, when it was seen, not one per refused call.
    expect(
      events.filter((e) => e.type === 'clock-back').map((e) => e.type === 'clock-back' && e.behindMs >= 390),
    ).toEqual([true]);
    clock.wallOffset = 0;
    await new Promise((done) => setTimeout(done, 5));
    const resumed = s.nextSync();
    expect(resumed > (during[during.length - 1] ?? last)).toBe(true);
  });

  it('stops issuing while its clock is more than maxSkewMs off the server, judged on the monotonic clock', async () => {
    const clock = new SteppedClock();
    const events: SnowflakeEvent[] = [];
    const s = generator(clock, events);
    await s.ready();
    s.nextSync();
    clock.wallOffset = 1500;
    expect(() => {
      for (let i = 0; i < 5000; i++) s.nextSync();
    }).toThrow(ClockSkewError);
    expect(events.some((e) => e.type === 'skew' && e.skewMs > 1000)).toBe(true);
    clock.wallOffset = 0;
    expect(() => s.nextSync()).not.toThrow();
    // Skewed before the lease is taken: the lease is given back at once.
    const skewed = new SteppedClock();
    skewed.wallOffset = -5000;
    await expect(generator(skewed).ready()).rejects.toBeInstanceOf(ClockSkewError);
  });

  it('keeps issuing when answers are slow but its clock is right: a long round trip is not a skew', async () => {
    // Every request waits 1.5 s (more than maxSkewMs) before it reaches ticketd, as one does behind
    // a hung peer: the server reads its clock late in the round trip. Judging "behind" from the
    // moment it asked, the generator stopped with a false TICKETD_CLIENT_CLOCK_SKEW.
    const relay = await startDelayingRelay(server.url, 1500);
    try {
      // A TTL the 3 s round trips of a renewal fit in: renewals every 3 s, each answered 1.5 s later.
      const slowPool = poolName('slow');
      await putPool(server.url, slowPool, { workerBits: 10, ttlMs: 9000, maxSkewMs: 1000 });
      const events: SnowflakeEvent[] = [];
      const s = createSnowflake({ urls: [relay.url], pool: slowPool, onEvent: (e) => events.push(e) });
      open.push(s);
      await s.ready();
      const until = performance.now() + 5500;
      let minted = 0;
      while (performance.now() < until) {
        for (let i = 0; i < 100; i++) s.nextSync();
        minted += 100;
        await new Promise((done) => setTimeout(done, 10));
      }
      expect(minted).toBeGreaterThan(1000);
      expect(events.filter((e) => e.type === 'renewed').length).toBeGreaterThan(0);
      expect(events.filter((e) => e.type === 'skew')).toEqual([]);
      await s.close();
    } finally {
      await relay.close();
    }
  }, 30_000);

  it('issues nothing more on a lease that ran out on the monotonic clock (a pause), then takes a new one', async () => {
    const clock = new SteppedClock();
    const events: SnowflakeEvent[] = [];
    const s = generator(clock, events);
    await s.ready();
    const first = s.nextSync();
    const held = s.workerId;
    // As a pause past the TTL looks from inside: the monotonic clock moved 3.1 s, no renewal ran.
    // (The wall clock is left alone: the server's did not move either.)
    clock.monoOffset = 3100;
    await new Promise((done) => setTimeout(done, 2));
    expect(() => s.nextSync()).toThrow(NoLeaseError);
    expect(events.some((e) => e.type === 'lease-ended')).toBe(true);
    const after = await s.next();
    expect(after > first).toBe(true);
    const leased = events.filter((e): e is Extract<SnowflakeEvent, { type: 'leased' }> => e.type === 'leased');
    expect(leased.length).toBe(2);
    // The old lease was never renewed after the jump: the server still has it expiring on time, and
    // the new lease is another epoch (another worker ID, or the same one after its reuse delay).
    expect(leased[1]!.epoch).not.toBe(leased[0]!.epoch);
    expect(held).toBe(leased[0]!.workerId);
  });

  it('cut off from ticketd (a partition), it retries its renewals, then ends the lease by itself when it runs out', async () => {
    const name = poolName('cutoff');
    await putPool(server.url, name, { workerBits: 2, ttlMs: 1000, maxSkewMs: 100 });
    const alone = await startInProcess(sharedBackends());
    const events: SnowflakeEvent[] = [];
    const s = createSnowflake({ urls: [alone.url], pool: name, onEvent: (e) => events.push(e) });
    open.push(s);
    await s.ready();
    s.nextSync();
    const leased = events.find((e): e is Extract<SnowflakeEvent, { type: 'leased' }> => e.type === 'leased')!;
    await alone.close();
    const cutAt = performance.now();
    while (!events.some((e) => e.type === 'lease-ended') && performance.now() - cutAt < 3000)
      await new Promise((done) => setTimeout(done, 20));
    const ended = performance.now() - cutAt;
    expect(events.some((e) => e.type === 'renew-failed')).toBe(true);
    expect(events.find((e) => e.type === 'lease-ended')).toMatchObject({
      workerId: leased.workerId,
      reason: expect.stringMatching(/ran out unrenewed/) as unknown,
    });
    // Within the TTL of the last renewal (every third of it), and no earlier than the lease could end.
    expect(ended).toBeLessThan(1000 + 200);
    expect(s.workerId).toBeUndefined();
    expect(() => s.nextSync()).toThrow(NoLeaseError);
  });

  it('releases on close with its last timestamp, which the next holder of the worker ID starts above', async () => {
    const name = poolName('close');
    await putPool(server.url, name, { workerBits: 1, ttlMs: 3000 });
    const s = createSnowflake({ urls: [server.url], pool: name });
    await s.ready();
    let last = 0n;
    for (let i = 0; i < 1000; i++) last = s.nextSync();
    const worker = s.workerId;
    const blocker = (await takeLease(server.url, name, 'blocker')).body;
    await s.close();
    await expect(s.next()).rejects.toBeInstanceOf(NoLeaseError);
    const again = (await takeLease(server.url, name, 'next')).body;
    expect(again.workerId).toBe(worker);
    expect(again.highWaterMs).toBeGreaterThanOrEqual(s.decompose(last).timestampMs);
    expect(blocker.workerId).not.toBe(worker);
    const state = await send(`${server.url}/v1/worker-pools/${name}`, undefined, { method: 'GET' });
    expect(state.body).toMatchObject({ leased: 2, cooling: 0 });
  });

  it('refuses a layout too narrow for the pool, and decomposes IDs of a layout of its own', async () => {
    const wide = poolName('wide');
    await putPool(server.url, wide, { workerBits: 12 });
    const narrow = createSnowflake({ urls: [server.url], pool: wide });
    await expect(narrow.ready()).rejects.toBeInstanceOf(SnowflakeLayoutError);
    await narrow.close();
    expect(() =>
      createSnowflake({ urls: [server.url], pool: wide, layout: { timeBits: 41, workerBits: 12, sequenceBits: 12 } }),
    ).toThrow(SnowflakeLayoutError);
    const epoch = Date.UTC(2025, 0, 1);
    const custom = createSnowflake({
      urls: [server.url],
      pool: wide,
      epoch,
      layout: { timeBits: 39, workerBits: 12, sequenceBits: 12 },
    });
    open.push(custom);
    await custom.ready();
    const before = Date.now();
    const id = custom.nextSync();
    const parts = custom.decompose(id);
    expect(parts.workerId).toBe(custom.workerId);
    expect(parts.sequence).toBe(0);
    expect(Math.abs(parts.timestampMs - before)).toBeLessThan(1000);
    expect(id >> 24n).toBe(BigInt(parts.timestampMs - epoch));
  });
});

/** An HTTP relay to `target` that holds every request `delayMs` before passing it on. */
async function startDelayingRelay(target: string, delayMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const relay: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      setTimeout(() => {
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(
            (e): e is [string, string] => typeof e[1] === 'string' && e[0] !== 'host' && e[0] !== 'content-length',
          ),
        );
        const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks);
        fetch(`${target}${req.url}`, { method: req.method, headers, body })
          .then(async (answer) => {
            res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
            res.end(Buffer.from(await answer.arrayBuffer()));
          })
          .catch(() => res.destroy());
      }, delayMs);
    });
  });
  await new Promise<void>((done) => relay.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`,
    close: () =>
      new Promise((done) => {
        relay.close(() => done());
        // Keep-alive connections of the generator would hold close() open.
        relay.closeAllConnections();
      }),
  };
}
