import { CapacityTracker, type CapacityStatus } from '../../src/service/capacity.js';
import { CAPACITY_WINDOW_MS, forecast } from '../../src/service/capacity-forecast.js';

describe('sequence capacity', () => {
  const setup = (
    maxId: bigint,
  ): { tracker: CapacityTracker; reports: CapacityStatus[]; advance: (ms: number) => void } => {
    let now = Date.parse('2026-12-02T00:00:00Z');
    const reports: CapacityStatus[] = [];
    const tracker = new CapacityTracker(
      maxId,
      () => now,
      (s) => reports.push(s),
    );
    return { tracker, reports, advance: (ms) => (now += ms) };
  };

  it('says nothing before the first fetch', () => {
    expect(setup(1000n).tracker.status()).toBeUndefined();
  });

  it('reports 80% and 95% of maxId once each, as the frontier passes them', () => {
    const { tracker, reports, advance } = setup(1000n);
    for (const last of [100n, 799n, 800n, 850n, 949n, 950n, 990n]) {
      tracker.observe(last);
      advance(1000);
    }
    expect(reports.map((r) => [r.level, r.usedPercent])).toEqual([
      ['warning', 80],
      ['critical', 95],
    ]);
  });

  it('projects exhaustion from the frontier’s rate of growth', () => {
    const { tracker, advance } = setup(1_000_000n);
    tracker.observe(10_000n);
    advance(10_000);
    tracker.observe(110_000n);
    const status = tracker.status()!;
    expect(status.idsPerSecond).toBe(10_000);
    // 890,000 IDs left at 10,000 per second: 89 s after the last observation.
    expect(status.projectedExhaustionAt).toBe(new Date(Date.parse('2026-12-02T00:00:10Z') + 89_000).toISOString());
    expect(status.level).toBe('ok');
  });

  it('never moves the frontier back, and reports exhaustion once', () => {
    const { tracker, reports } = setup(2147483647n);
    tracker.observe(2147483000n);
    tracker.observe(5n);
    expect(tracker.status()!.highestId).toBe('2147483000');
    tracker.markExhausted();
    tracker.markExhausted();
    expect(reports.map((r) => r.level)).toEqual(['critical', 'exhausted']);
    expect(tracker.status()).toMatchObject({ level: 'exhausted', projectedExhaustionAt: null });
  });

  it('gives no projection past the last instant a Date can hold (2^64 − 1 at a few IDs per second)', () => {
    const { tracker, advance } = setup(2n ** 64n - 1n);
    tracker.observe(100n);
    advance(10_000);
    tracker.observe(120n);
    expect(tracker.status()).toMatchObject({ idsPerSecond: 2, projectedExhaustionAt: null, level: 'ok' });
  });

  it('tells the seconds left at that rate, 0 once exhausted, and none in the first seconds', () => {
    const { tracker, advance } = setup(1_000_000n);
    tracker.observe(10_000n);
    advance(1000);
    tracker.observe(20_000n);
    // A range and its prefetch arrive together: no rate from a burst of a second.
    expect(tracker.status()).toMatchObject({ idsPerSecond: null, secondsLeft: null, projectedExhaustionAt: null });
    advance(9000);
    tracker.observe(110_000n);
    expect(tracker.status()).toMatchObject({ idsPerSecond: 10_000, secondsLeft: 89 });
    tracker.markExhausted();
    expect(tracker.status()).toMatchObject({ secondsLeft: 0, projectedExhaustionAt: null });
  });

  /** Drives the tracker at `perSecond` IDs a second for `seconds`, one fetch a second. */
  const load = (t: ReturnType<typeof setup>, from: bigint, perSecond: number, seconds: number): bigint => {
    let frontier = from;
    for (let i = 0; i < seconds; i++) {
      t.advance(1000);
      frontier += BigInt(perSecond);
      t.tracker.observe(frontier);
    }
    return frontier;
  };

  /** Within 1% of `expected`. */
  const near = (value: number | null | undefined, expected: number): boolean =>
    value !== null && value !== undefined && Math.abs(value / expected - 1) < 0.01;

  it('answers a doubling of the load within the window, and a stop by a falling rate', () => {
    const t = setup(10n ** 12n);
    let frontier = load(t, 1n, 100, 1800);
    expect(near(t.tracker.status()!.idsPerSecond, 100)).toBe(true);
    frontier = load(t, frontier, 200, 60);
    // One minute into the new load a fifth of the window has it.
    expect(near(t.tracker.status()!.idsPerSecond, 120)).toBe(true);
    load(t, frontier, 200, CAPACITY_WINDOW_MS / 1000);
    expect(near(t.tracker.status()!.idsPerSecond, 200)).toBe(true);
    t.advance(CAPACITY_WINDOW_MS / 2);
    // No fetch for half the window: the rate halves.
    expect(near(t.tracker.status()!.idsPerSecond, 100)).toBe(true);
    t.advance(CAPACITY_WINDOW_MS);
    // From before the last fetch: one second's 200 IDs over the window and a half since.
    expect(near(t.tracker.status()!.idsPerSecond, 200 / (1 + (1.5 * CAPACITY_WINDOW_MS) / 1000))).toBe(true);
  });

  it('holds the rate of a process whose blocks last it longer than the window, between its fetches', () => {
    // 10 IDs a second from blocks of 10,000 fetched every 1,000 s, the status read every 15 s (scrapes).
    let now = 0;
    let fetched = 0n;
    const tracker = new CapacityTracker(
      10n ** 9n,
      () => now,
      () => undefined,
      () => ({ cached: fetched - BigInt(Math.floor(now / 100)), issued: BigInt(Math.floor(now / 100)) }),
    );
    const rates: number[] = [];
    for (; now <= 4_000_000; now += 15_000) {
      if (BigInt(now) >= fetched * 100n) {
        fetched += 10_000n;
        tracker.observe(fetched, 10_000n);
      }
      const rate = tracker.status()!.idsPerSecond;
      if (now > 1_000_000 && rate !== null) rates.push(rate);
    }
    expect(rates.length).toBeGreaterThan(100);
    expect(rates.every((r) => near(r, 10) || Math.abs(r - 10) < 0.5)).toBe(true);
  });

  it('counts its own cache as still to come, so a cache warming up does not read as load', () => {
    // 25,000 IDs handed out at one a millisecond; the cache refills when below half a segment, and its
    // segments double from 50 IDs to 3,200 (a range cache warming up): the frontier runs far ahead.
    let now = 0;
    let served = 0n;
    let frontier = 0n;
    const tracker = new CapacityTracker(
      25_000n,
      () => now,
      () => undefined,
      () => ({ cached: frontier - served, issued: served }),
    );
    let segment = 50n;
    for (; now < 10_000; now += 10) {
      served = BigInt(now);
      if (frontier - served < segment / 2n) {
        tracker.observe(frontier + segment, segment);
        frontier += segment;
        if (segment < 3200n) segment *= 2n;
      }
      if (now % 1000 === 0) tracker.status();
    }
    served = BigInt(now);
    const status = tracker.status()!;
    expect(Number(frontier - served)).toBeGreaterThan(1000);
    expect(near(status.idsPerSecond, 1000)).toBe(true);
    expect(near(status.secondsLeft, 15)).toBe(true);
  });
});

describe('the pure forecast', () => {
  const at = (seconds: number, frontier: number, fetched: number, issued: number) => ({
    at: seconds * 1000,
    frontier: BigInt(frontier),
    fetched: BigInt(fetched),
    issued: BigInt(issued),
  });

  it('measures from the newest sample at least a window old to now, or the oldest while the window fills', () => {
    const samples = [at(0, 0, 0, 0), at(100, 1000, 1000, 1000), at(400, 4000, 4000, 4000)];
    expect(forecast(samples, at(500, 5000, 5000, 5000), 10_000n, 0n, 300_000)).toEqual({
      idsPerSecond: 10,
      secondsLeft: 500,
    });
    expect(forecast(samples, at(402, 5000, 5000, 5000), 10_000n, 0n, 300_000).idsPerSecond).toBe(4000 / 302);
    expect(forecast(samples, at(250, 5000, 5000, 5000), 10_000n, 0n, 300_000).idsPerSecond).toBe(20);
    expect(forecast([], at(500, 5000, 5000, 5000), 10_000n, 0n).idsPerSecond).toBeNull();
    expect(forecast(samples.slice(0, 1), at(4, 50, 50, 50), 10_000n, 0n).idsPerSecond).toBeNull();
  });

  it('scales the frontier by what was handed out of what was fetched, and adds how long the cache lasts', () => {
    // Stripes of 16 for 2 backends: the frontier moves 8 units of maxId per ID; half of what this process
    // fetched is still cached (it warmed up), and the cache holds 100 IDs, 10 s at its 10 IDs a second.
    const f = forecast([at(0, 0, 0, 0)], at(10, 1600, 200, 100), 17_600n, 100n);
    expect(f.idsPerSecond).toBe(80);
    expect(f.secondsLeft).toBe(200 + 10);
  });

  it('says 0 left when the frontier is at maxId and nothing is cached, and no time without a rate', () => {
    expect(forecast([at(0, 0, 0, 0)], at(10, 1000, 1000, 1000), 1000n, 0n).secondsLeft).toBe(0);
    expect(forecast([at(0, 500, 500, 500)], at(10, 500, 500, 500), 1000n, 0n)).toEqual({
      idsPerSecond: 0,
      secondsLeft: null,
    });
  });
});
