import { assertSequenceName, parseSequenceSettings, parseUnsigned } from '../../src/core/sequence.js';
import { MAX_UINT64 } from '../../src/core/ticket-math.js';
import { BadRequestError } from '../../src/errors.js';

describe('sequence names and settings', () => {
  it('accepts names of the pattern and refuses the rest before any SQL', () => {
    expect(() => assertSequenceName('orders_2')).not.toThrow();
    expect(() => assertSequenceName('a'.repeat(48))).not.toThrow();
    for (const bad of ['Bad', 'a;drop', 'a'.repeat(49), '', '1a', 'a-b', 'a`b']) {
      expect(() => assertSequenceName(bad)).toThrow(BadRequestError);
    }
  });

  it('defaults startAfter to 0 and maxId to 2^64 − 1', () => {
    expect(parseSequenceSettings('s', { blockSize: 100 })).toEqual({ name: 's', blockSize: 100n, startAfter: 0n, maxId: MAX_UINT64 });
  });

  it('takes large values as decimal strings and refuses inexact numbers', () => {
    expect(parseUnsigned('18446744073709551615', 'maxId')).toBe(MAX_UINT64);
    expect(() => parseUnsigned('18446744073709551616', 'maxId')).toThrow(/maxId must be an integer from 0/);
    expect(() => parseUnsigned(2 ** 60, 'startAfter')).toThrow(/below 2\^53/);
    expect(() => parseUnsigned(-1, 'startAfter')).toThrow(BadRequestError);
  });

  it('refuses missing or bad block sizes, unknown fields, and maxId ≤ startAfter', () => {
    expect(() => parseSequenceSettings('s', {})).toThrow(/blockSize is required/);
    expect(() => parseSequenceSettings('s', { blockSize: 0 })).toThrow(/blockSize must be an integer from 1 to 1000000000; got 0/);
    expect(() => parseSequenceSettings('s', { blockSize: 1, extra: 1 })).toThrow(/unknown field\(s\) extra/);
    expect(() => parseSequenceSettings('s', { blockSize: 1, startAfter: 10, maxId: 10 })).toThrow(/maxId \(10\) must be greater/);
    expect(() => parseSequenceSettings('s', [1])).toThrow(/JSON object/);
  });
});
