import {
  blockForTicket,
  firstUsefulTicket,
  HighWaterMarks,
  MAX_UINT64,
  ownsTicket,
  toTicket,
} from '../../src/core/ticket-math.js';
import { TicketRegressionError } from '../../src/errors.js';

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
    expect(blockForTicket(900719925474099n, s)).toEqual({ kind: 'range', range: { first: 9007199254740991n, last: 9007199254740999n } });
    expect(blockForTicket(900719925474098n, s)).toEqual({ kind: 'below-start' });
    expect(blockForTicket(900719925474100n, s)).toEqual({ kind: 'range', range: { first: 9007199254741000n, last: 9007199254741009n } });
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
});

describe('stripes', () => {
  it('checks parity, with offset == increment meaning residue 0', () => {
    expect(ownsTicket(5n, odd)).toBe(true);
    expect(ownsTicket(6n, odd)).toBe(false);
    expect(ownsTicket(6n, even)).toBe(true);
    expect(ownsTicket(9n, { increment: 3n, offset: 3n })).toBe(true);
  });
});

describe('HighWaterMarks', () => {
  it('accepts rising tickets of the right parity', () => {
    const marks = new HighWaterMarks();
    marks.accept('a', 'default', 1n, odd);
    marks.accept('a', 'default', 3n, odd);
    expect(marks.get('a', 'default')).toBe(3n);
  });

  it('refuses a ticket at or below the mark, and keeps the mark', () => {
    const marks = new HighWaterMarks();
    marks.accept('a', 'default', 11n, odd);
    expect(() => marks.accept('a', 'default', 11n, odd)).toThrow(TicketRegressionError);
    expect(() => marks.accept('a', 'default', 5n, odd)).toThrow(/at or below ticket 11/);
    expect(marks.get('a', 'default')).toBe(11n);
  });

  it('refuses a ticket of the other backend’s parity', () => {
    const marks = new HighWaterMarks();
    expect(() => marks.accept('a', 'default', 4n, odd)).toThrow(/not ≡ 1 \(mod 2\)/);
  });

  it('keeps marks per backend and per sequence, and raise never lowers', () => {
    const marks = new HighWaterMarks();
    marks.accept('a', 's1', 9n, odd);
    marks.accept('a', 's2', 1n, odd);
    marks.accept('b', 's1', 2n, even);
    marks.raise('a', 's1', 3n);
    expect(marks.get('a', 's1')).toBe(9n);
    marks.raise('a', 's1', 21n);
    expect(() => marks.accept('a', 's1', 21n, odd)).toThrow(TicketRegressionError);
  });
});
