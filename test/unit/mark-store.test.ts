import { firstSuccess, highestOverlapping, markFor } from '../../src/allocator/mark-store.js';
import type { StoredMark } from '../../src/backend/backend.js';

const mark = (increment: bigint, residue: bigint, ticket: bigint): StoredMark => ({ sequence: 's', increment, residue, ticket });

describe('stored high-water marks', () => {
  it('keys a mark by residue class, offset == increment being residue 0', () => {
    expect(markFor('s', { increment: 2n, offset: 2n }, 10n)).toEqual(mark(2n, 0n, 10n));
  });

  it('takes the highest mark of the same class and ignores the other class', () => {
    const odd = { increment: 2n, offset: 1n };
    expect(highestOverlapping([mark(2n, 1n, 101n), mark(2n, 0n, 900n), mark(2n, 1n, 55n)], odd)).toBe(101n);
    expect(highestOverlapping([mark(2n, 0n, 900n)], odd)).toBeUndefined();
  });

  it('counts marks written under another increment when their classes overlap (re-striping)', () => {
    // Old odd tickets (mod 2 = 1) include tickets ≡ 1 and ≡ 3 (mod 4); even ones never do.
    expect(highestOverlapping([mark(2n, 1n, 5001n), mark(2n, 0n, 9000n)], { increment: 4n, offset: 3n })).toBe(5001n);
    expect(highestOverlapping([mark(4n, 2n, 7000n)], { increment: 2n, offset: 1n })).toBeUndefined();
  });

  it('waits for the first peer that stored the mark, and reports false only when every peer failed', async () => {
    const hang = new Promise<void>(() => undefined);
    expect(await firstSuccess([hang, Promise.resolve()])).toBe(true);
    expect(await firstSuccess([Promise.reject(new Error('down')), Promise.reject(new Error('down'))])).toBe(false);
    expect(await firstSuccess([])).toBe(false);
  });
});
