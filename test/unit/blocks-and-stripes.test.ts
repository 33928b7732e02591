import { toTicket } from '../../src/backend/mysql/ticket-sql.js';
import { blockForTicket, firstUsefulTicket, MAX_UINT64, ticketOfId } from '../../src/core/blocks.js';
import { classesOverlap, ownsTicket } from '../../src/core/stripes.js';

const plain = { blockSize: 10_000n, startAfter: 0n, maxId: MAX_UINT64 };
const odd = { increment: 2n, offset: 1n };
const even = { increment: 2n, offset: 2n };

describe('toTicket', () => {
  it('takes numbers below 2^53 and strings above it exactly', () => {
    expect(toTicket(7)).toBe(7n);
    expect(toTicket('9007199254740993')).toBe(9007199254740993n);
  });

  it('reads the signed values mysql2 gives for tickets of 2^63 and above as unsigned', () => {
    expect(toTicket(-1)).toBe(MAX_UINT64);
    expect(toTicket('-9223372036854775808')).toBe(1n << 63n);
  });

  it('rejects zero, fractions, unsafe numbers and junk', () => {
    for (const bad of [0, '0', 1.5, 2 ** 60, 'abc', '', null, undefined, '-9223372036854775809']) {
      expect(() => toTicket(bad)).toThrow();
    }
  });
});

describe('blockForTicket', () => {
  it('maps ticket t to [t·B, t·B + B − 1]', () => {
    expect(blockForTicket(3n, plain)).toEqual({ kind: 'range', range: { first: 30_000n, last: 39_999n } });
  });

  it('never yields an ID at or below startAfter', () => {
    const s = { blockSize: 10n, startAfter: 9007199254740990n, maxId: MAX_UINT64 };
    expect(firstUsefulTicket(s)).toBe(900719925474100n);
    expect(blockForTicket(900719925474099n, s)).toEqual({
      kind: 'range',
      range: { first: 9007199254740991n, last: 9007199254740999n },
    });
    expect(blockForTicket(900719925474098n, s)).toEqual({ kind: 'below-start' });
    expect(blockForTicket(900719925474100n, s)).toEqual({
      kind: 'range',
      range: { first: 9007199254741000n, last: 9007199254741009n },
    });
  });

  it('clips the last block at maxId and reports exhaustion past it', () => {
    const s = { blockSize: 100n, startAfter: 0n, maxId: 2147483647n };
    expect(blockForTicket(21474836n, s)).toEqual({ kind: 'range', range: { first: 2147483600n, last: 2147483647n } });
    expect(blockForTicket(21474837n, s)).toEqual({ kind: 'exhausted' });
  });

  it('stays exact near 2^64 − 1', () => {
    const s = { blockSize: 1n, startAfter: MAX_UINT64 - 10n, maxId: MAX_UINT64 };
    expect(blockForTicket(MAX_UINT64, s)).toEqual({ kind: 'range', range: { first: MAX_UINT64, last: MAX_UINT64 } });
    const big = { blockSize: 10_000n, startAfter: 0n, maxId: MAX_UINT64 };
    expect(blockForTicket(MAX_UINT64 / 10_000n, big)).toEqual({
      kind: 'range',
      range: { first: (MAX_UINT64 / 10_000n) * 10_000n, last: MAX_UINT64 },
    });
    expect(blockForTicket(MAX_UINT64 / 10_000n + 1n, big)).toEqual({ kind: 'exhausted' });
  });

  it('maps every ID of a block back to its ticket (decode and migrate verify)', () => {
    const s = { blockSize: 100n, startAfter: 150n, maxId: 2147483647n };
    for (const ticket of [2n, 3n, 21474836n]) {
      const outcome = blockForTicket(ticket, s);
      if (outcome.kind !== 'range') throw new Error(`ticket ${ticket} has no range`);
      expect(ticketOfId(outcome.range.first, s)).toBe(ticket);
      expect(ticketOfId(outcome.range.last, s)).toBe(ticket);
    }
    expect(ticketOfId(MAX_UINT64, { blockSize: 1n })).toBe(MAX_UINT64);
  });
});

describe('stripes', () => {
  it('checks parity, with offset == increment meaning residue 0', () => {
    expect(ownsTicket(5n, odd)).toBe(true);
    expect(ownsTicket(6n, odd)).toBe(false);
    expect(ownsTicket(6n, even)).toBe(true);
    expect(ownsTicket(9n, { increment: 3n, offset: 3n })).toBe(true);
  });
});

describe('classesOverlap', () => {
  it('matches classes under the same increment by residue, and across increments modulo their gcd', () => {
    expect(classesOverlap({ increment: 2n, residue: 1n }, odd)).toBe(true);
    expect(classesOverlap({ increment: 2n, residue: 0n }, odd)).toBe(false);
    expect(classesOverlap({ increment: 2n, residue: 0n }, even)).toBe(true);
    // Re-striped from 2 to 4: the old odd class shares tickets with 4/3, the old even one does not.
    expect(classesOverlap({ increment: 2n, residue: 1n }, { increment: 4n, offset: 3n })).toBe(true);
    expect(classesOverlap({ increment: 2n, residue: 0n }, { increment: 4n, offset: 3n })).toBe(false);
  });
});
