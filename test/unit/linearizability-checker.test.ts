// The checker of strict sequences' tests, on histories made by hand: it must find what it is for.
import { checkLinearizable, type Operation } from '../support/linearizability.js';

const op = (sentAt: number, answeredAt: number, ids: number[], via = 'fe'): Operation => ({
  sentAt,
  answeredAt,
  ids: ids.map(BigInt),
  via,
});

describe('the linearizability checker', () => {
  it('accepts overlapping requests in any order, and later requests above earlier answers', () => {
    const verdict = checkLinearizable([op(0, 10, [5, 6]), op(1, 9, [3, 4]), op(11, 12, [7]), op(10.5, 20, [8, 9])]);
    expect(verdict).toMatchObject({ operations: 4, ids: 7, outOfOrder: 0, repeated: [], unsorted: 0 });
  });

  it('finds a request sent after an answer that holds a lower ID (a stale leader)', () => {
    const verdict = checkLinearizable([op(0, 5, [100]), op(6, 7, [50], 'stale'), op(8, 9, [101])]);
    expect(verdict.outOfOrder).toBe(1);
    expect(verdict.examples[0]!.after.via).toBe('stale');
  });

  it('finds an equal ID across real time, a repeat, and an answer out of order within itself', () => {
    const verdict = checkLinearizable([op(0, 1, [10]), op(2, 3, [10]), op(4, 5, [12, 11])]);
    expect(verdict.outOfOrder).toBe(1);
    expect(verdict.repeated).toEqual([10n]);
    expect(verdict.unsorted).toBe(1);
  });

  it('compares with the highest ID answered before, not only the last answer', () => {
    // The 1000 answered first; an answer of 20 comes later; a request after both with 500 is out of order.
    const verdict = checkLinearizable([op(0, 1, [1000]), op(0.5, 2, [20]), op(3, 4, [500])]);
    expect(verdict.outOfOrder).toBe(1);
  });
});
