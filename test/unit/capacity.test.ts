import { CapacityTracker, type CapacityStatus } from '../../src/service/capacity.js';

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
});
