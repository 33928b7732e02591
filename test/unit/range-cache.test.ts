import { RangeCache } from '../../src/cache/range-cache.js';
import type { IdRange } from '../../src/core/blocks.js';
import { BackendsUnavailableError, SequenceExhaustedError } from '../../src/core/errors.js';

/** A refill that hands out consecutive tickets, and can be told to hang or fail. */
function fakeRefill(blockSize: bigint) {
  let ticket = 0n;
  const calls: number[] = [];
  const state = { hang: false, fail: undefined as Error | undefined };
  const refill = (tickets: number): Promise<IdRange[]> => {
    calls.push(tickets);
    if (state.hang) return new Promise(() => undefined);
    if (state.fail) return Promise.reject(state.fail);
    const ranges: IdRange[] = [];
    for (let i = 0; i < tickets; i++) {
      ticket++;
      ranges.push({ first: ticket * blockSize, last: ticket * blockSize + blockSize - 1n });
    }
    return Promise.resolve(ranges);
  };
  return { refill, calls, state };
}

function ids(ranges: IdRange[]): bigint[] {
  const out: bigint[] = [];
  for (const r of ranges) for (let id = r.first; id <= r.last; id++) out.push(id);
  return out;
}

const flush = () => new Promise((r) => setImmediate(r));

function cacheWith(fake: ReturnType<typeof fakeRefill>, clock = () => 0, blockSize = 100n) {
  return new RangeCache({ sequence: 't', blockSize, refill: fake.refill, clock, onBackgroundError: () => undefined });
}

describe('RangeCache', () => {
  it('waits for the first refill, then serves from memory without waiting', async () => {
    const fake = fakeRefill(100n);
    const cache = cacheWith(fake);
    expect(cache.tryTake(1)).toBeUndefined();
    expect(ids(await cache.take(3))).toEqual([100n, 101n, 102n]);
    expect(ids(cache.tryTake(2)!)).toEqual([103n, 104n]);
  });

  it('prefetches the next segment once 10% of the current one is used, not before', async () => {
    const fake = fakeRefill(100n);
    const cache = cacheWith(fake);
    await cache.take(10);
    await flush();
    expect(fake.calls).toHaveLength(1);
    cache.tryTake(1);
    await flush();
    expect(fake.calls).toEqual([1, 2]);
    expect(cache.available).toBe(89 + 200);
  });

  it('never waits while a prefetched range exists, even if the next refill hangs', async () => {
    const fake = fakeRefill(100n);
    const cache = cacheWith(fake);
    await cache.take(1);
    fake.state.hang = true;
    const served: bigint[] = [];
    // 99 IDs are cached; the prefetch started at the 11th hangs forever, and none of these may wait.
    for (let i = 0; i < 99; i++) {
      const taken = cache.tryTake(1);
      expect(taken).toBeDefined();
      served.push(...ids(taken!));
    }
    expect(new Set(served).size).toBe(99);
    expect(fake.calls).toHaveLength(2);
    expect(cache.tryTake(1)).toBeUndefined();
  });

  it('doubles the refill size when refills come faster than the target interval, and shrinks it when idle', async () => {
    const fake = fakeRefill(100n);
    let now = 0;
    const cache = cacheWith(fake, () => now);
    for (let i = 0; i < 5; i++) {
      await cache.take(cache.available + 1);
      now += 10;
    }
    expect(fake.calls.slice(0, 4)).toEqual([1, 2, 4, 8]);
    const grown = cache.ticketsPerRefill;
    now += 60_000;
    await cache.take(cache.available + 1);
    expect(cache.ticketsPerRefill).toBe(grown / 2);
  });

  it('refills enough tickets for a request larger than a segment', async () => {
    const fake = fakeRefill(100n);
    const cache = cacheWith(fake);
    const taken = ids(await cache.take(1000));
    expect(taken).toHaveLength(1000);
    expect(new Set(taken).size).toBe(1000);
    expect(fake.calls[fake.calls.length - 1]).toBeGreaterThanOrEqual(10);
  });

  it('hands out disjoint IDs to many concurrent takers', async () => {
    const fake = fakeRefill(10n);
    const cache = cacheWith(fake, () => 0, 10n);
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => cache.take((i % 7) + 1)));
    const all = results.flatMap(ids);
    expect(all.length).toBe(results.reduce((n, r) => n + ids(r).length, 0));
    expect(new Set(all).size).toBe(all.length);
  });

  it('passes a refill failure to the waiting request and recovers on the next one', async () => {
    const fake = fakeRefill(100n);
    const cache = cacheWith(fake);
    fake.state.fail = new BackendsUnavailableError('down');
    await expect(cache.take(1)).rejects.toBeInstanceOf(BackendsUnavailableError);
    fake.state.fail = undefined;
    expect(ids(await cache.take(1))).toEqual([100n]);
  });

  it('serves what is left after exhaustion, then refuses with SequenceExhaustedError', async () => {
    let first = true;
    const refill = (): Promise<IdRange[]> => {
      if (first) {
        first = false;
        return Promise.resolve([{ first: 10n, last: 14n }]);
      }
      return Promise.reject(new SequenceExhaustedError('no more'));
    };
    const cache = new RangeCache({
      sequence: 't',
      blockSize: 5n,
      refill,
      clock: () => 0,
      onBackgroundError: () => undefined,
    });
    expect(ids(await cache.take(3))).toEqual([10n, 11n, 12n]);
    await expect(cache.take(3)).rejects.toThrow(/has 2 IDs left/);
    expect(cache.exhausted).toBe(true);
    expect(ids(await cache.take(2))).toEqual([13n, 14n]);
    await expect(cache.take(1)).rejects.toBeInstanceOf(SequenceExhaustedError);
  });
});
