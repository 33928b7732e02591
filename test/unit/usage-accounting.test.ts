import { fleetUsage, instanceState, latestPerInstance, STALE_MARGIN_MS } from '../../src/core/fleet-usage.js';
import { NO_LOSS, UsageTally, type StoredUsageRow, type UsageCounts } from '../../src/core/usage.js';

/** A stored row of `instance` with the given figures (nothing lost unless said). */
function stored(
  instance: string,
  flush: number,
  counts: Partial<UsageCounts>,
  extra: Partial<StoredUsageRow> = {},
): StoredUsageRow {
  return {
    sequence: 's',
    instance,
    flush,
    stopped: false,
    flushEveryMs: 1000,
    secondsLeft: null,
    ageMs: 0,
    counts: { leased: 0, handedOut: 0, returned: 0, reclaimed: 0, cached: 0, abandoned: NO_LOSS, ...counts },
    ...extra,
  };
}

describe('a front end tallies what it did with the IDs it leased', () => {
  it('adds the caches’ holdings to what it counted, so that leased = handed out + returned + abandoned + cached', () => {
    const tally = new UsageTally();
    tally.leased('s', 100);
    tally.leased('s', 10);
    tally.handedOut('s', 10);
    tally.returned('s', 5);
    const figures = tally.figures([{ sequence: 's', handedOut: 60, held: 35, retired: false }]);
    expect(figures.get('s')).toEqual({
      leased: 110,
      handedOut: 70,
      returned: 5,
      reclaimed: 0,
      cached: 35,
      abandoned: NO_LOSS,
    });
  });

  it('counts a stopped front end’s cache as lost for shutdown, and a retired sequence’s as lost for retired', () => {
    const tally = new UsageTally();
    tally.leased('s', 100);
    tally.leased('r', 50);
    tally.abandoned('s', 'surplus', 10);
    const holdings = [
      { sequence: 's', handedOut: 40, held: 50, retired: false },
      { sequence: 'r', handedOut: 20, held: 30, retired: true },
    ];
    const stopped = tally.figures(holdings, true);
    expect(stopped.get('s')).toMatchObject({
      cached: 0,
      abandoned: { shutdown: 50, retired: 0, surplus: 10, crash: 0 },
    });
    expect(stopped.get('r')).toMatchObject({
      cached: 0,
      abandoned: { shutdown: 0, retired: 30, surplus: 0, crash: 0 },
    });
    // Running, the same holdings are cached, not lost.
    expect(tally.figures(holdings).get('s')).toMatchObject({ cached: 50, abandoned: { shutdown: 0 } });
  });

  it('lists a sequence it only holds (a cache not yet counted) with zeros rather than leaving it out', () => {
    const figures = new UsageTally().figures([{ sequence: 'new', handedOut: 0, held: 0, retired: false }]);
    expect(figures.get('new')).toMatchObject({ leased: 0, cached: 0 });
  });
});

describe("the fleet's figures from every backend's rows", () => {
  it('says when it runs out by the shortest forecast of the running instances, not of stopped or crashed ones', () => {
    const rows = [
      stored('running-a', 1, {}, { secondsLeft: 5000 }),
      stored('running-b', 1, {}, { secondsLeft: 3000 }),
      stored('running-c', 1, {}),
      stored('stopped', 1, {}, { stopped: true, secondsLeft: 10 }),
      stored('crashed', 1, {}, { ageMs: 3 * 1000 + STALE_MARGIN_MS + 1, secondsLeft: 20 }),
    ];
    expect(fleetUsage(rows)[0]!.secondsLeft).toBe(3000);
    expect(fleetUsage([stored('alone', 1, {})])[0]!.secondsLeft).toBeNull();
  });

  it('keeps each instance’s row of the highest flush, whichever backend holds it (a restored backend holds older ones)', () => {
    const rows = [stored('a', 7, { leased: 70 }), stored('a', 9, { leased: 90 }), stored('b', 2, { leased: 20 })];
    expect(
      latestPerInstance(rows)
        .map((r) => r.counts.leased)
        .sort(),
    ).toEqual([20, 90]);
    expect(fleetUsage(rows)[0]!.leased).toBe(110);
  });

  it('tells a crashed instance by a row older than three flushes and the margin that never said it stopped', () => {
    const bound = 3 * 1000 + STALE_MARGIN_MS;
    expect(instanceState(stored('a', 1, {}, { ageMs: bound }))).toBe('running');
    expect(instanceState(stored('a', 1, {}, { ageMs: bound + 1 }))).toBe('crashed');
    expect(instanceState(stored('a', 1, {}, { ageMs: bound + 1, stopped: true }))).toBe('stopped');
  });

  it("counts a crashed instance's cache, and all it did not report, as lost to the crash; the figures add up", () => {
    const rows = [
      // Running: 100 leased, 60 handed out, 40 cached.
      stored('live', 3, { leased: 100, handedOut: 60, cached: 40 }),
      // Stopped cleanly: what it had cached is lost for shutdown.
      stored('done', 5, { leased: 50, handedOut: 45, abandoned: { ...NO_LOSS, shutdown: 5 } }, { stopped: true }),
      // Crashed: its row says 30 cached; they are lost, not cached.
      stored('dead', 4, { leased: 80, handedOut: 40, returned: 10, cached: 30 }, { ageMs: 60_000 }),
    ];
    const [s] = fleetUsage(rows);
    expect(s).toMatchObject({
      instances: { running: 1, stopped: 1, crashed: 1 },
      leased: 230,
      handedOut: 145,
      returned: 10,
      cached: 40,
      lost: { shutdown: 5, retired: 0, surplus: 0, crash: 30 },
      lostTotal: 35,
    });
    expect(s!.leased).toBe(s!.handedOut + s!.returned + s!.lostTotal + s!.cached);
    expect(s!.lossRatio).toBeCloseTo(35 / 180);
  });

  it('has no loss ratio before any ID was handed out or lost, and sorts sequences by name', () => {
    const rows = [
      stored('a', 1, {}, { sequence: 'zeta' }),
      stored('a', 1, { leased: 5, cached: 5 }, { sequence: 'alpha' }),
    ];
    expect(fleetUsage(rows).map((s) => [s.sequence, s.lossRatio])).toEqual([
      ['alpha', null],
      ['zeta', null],
    ]);
  });
});
