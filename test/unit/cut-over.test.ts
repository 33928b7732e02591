import { counterProblem, defaultReserve, regionOf, rollbackCounter } from '../../src/migrate/cut-over.js';

/** The cut of a legacy column between the two writers of a rolling deploy (src/migrate/cut-over.ts). */
describe('the cut-over of a legacy column', () => {
  const seq = { startAfter: 1000n, maxId: 2_000_000_000n };

  it("puts every ID in exactly one region: before, ticketd's range, or the old version's reserve", () => {
    expect([999n, 1000n, 1001n, 2_000_000_000n, 2_000_000_001n, 2147483647n].map((id) => regionOf(id, seq))).toEqual([
      'before',
      'before',
      'ticketd',
      'ticketd',
      'reserve',
      'reserve',
    ]);
    // Exact above 2^53: no double rounding decides a region.
    const big = { startAfter: 9007199254740993n, maxId: 18446744073709551614n };
    expect(regionOf(9007199254740993n, big)).toBe('before');
    expect(regionOf(9007199254740994n, big)).toBe('ticketd');
    expect(regionOf(18446744073709551615n, big)).toBe('reserve');
  });

  it('keeps 1/16 of the free range for the old version by default, none when there is none', () => {
    expect(defaultReserve(2147483647n, 15199n)).toBe(134216778n);
    expect(defaultReserve(100n, 100n)).toBe(0n);
  });

  it('finds a counter at or below maxId, where inserts without an ID would take IDs ticketd issues', () => {
    expect(counterProblem(undefined, seq)).toBeUndefined();
    expect(counterProblem(2_000_000_001n, seq)).toBeUndefined();
    expect(counterProblem(2_000_000_000n, seq)).toMatch(
      /AUTO_INCREMENT is 2000000000, inside ticketd's range \(1000, 2000000000\]/,
    );
    expect(counterProblem(5n, seq)).toBeDefined();
  });

  it('after a rollback, starts the counter above maxId when the sequence keeps a reserve, else above the highest ID issued', () => {
    expect(rollbackCounter(seq, 2147483647n, 50_099n)).toBe(2_000_000_001n);
    expect(rollbackCounter({ maxId: 2147483647n }, 2147483647n, 50_099n)).toBe(50_100n);
    // An opaque sequence may have issued maxId itself.
    expect(rollbackCounter(seq, 2147483647n, 2_000_000_000n)).toBe(2_000_000_001n);
  });
});
