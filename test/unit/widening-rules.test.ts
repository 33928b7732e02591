import { judgeRows, judgeWidening, parseWidening } from '../../src/core/widening.js';
import type { SequenceSettings } from '../../src/core/sequence.js';
import { sameButMaxId, withKey } from '../../src/core/sequence.js';
import { BadRequestError, SequenceConflictError } from '../../src/core/errors.js';

const int32: SequenceSettings = Object.freeze({
  name: 'orders',
  blockSize: 100n,
  startAfter: 1_500_000n,
  maxId: 2_147_483_647n,
  ids: 'ordered',
});

describe('widening rules', () => {
  it('reads only maxId, as a number or a decimal string, and names every other field it refuses', () => {
    expect(parseWidening({ maxId: '9223372036854775807' })).toBe(9_223_372_036_854_775_807n);
    expect(parseWidening({ maxId: 4294967295 })).toBe(4_294_967_295n);
    expect(() => parseWidening({ maxId: '5', blockSize: 10 })).toThrow(/"blockSize" is fixed/);
    expect(() => parseWidening({ startAfter: 1, ids: 'opaque' })).toThrow(/"startAfter", "ids" are fixed/);
    expect(() => parseWidening({})).toThrow(BadRequestError);
    expect(() => parseWidening([])).toThrow(BadRequestError);
    expect(() => parseWidening({ maxId: -1 })).toThrow(BadRequestError);
  });

  it('grows maxId, takes the same one as a repeat, and refuses to lower it', () => {
    expect(judgeWidening(int32, 9_223_372_036_854_775_807n)).toBe(true);
    expect(judgeWidening(int32, 2_147_483_647n)).toBe(false);
    expect(() => judgeWidening(int32, 2_147_483_646n)).toThrow(SequenceConflictError);
    expect(() => judgeWidening(int32, 1n)).toThrow(/can only grow/);
  });

  it("refuses any change to an opaque sequence's maxId, saying why", () => {
    const opaque: SequenceSettings = { ...int32, ids: 'opaque', startAfter: 0n, maxId: 10_000_000n };
    expect(() => judgeWidening(opaque, 20_000_000n)).toThrow(/keyed permutation .* IDs would repeat/);
    expect(judgeWidening(opaque, 10_000_000n)).toBe(false);
  });

  it('holds rows that differ only by maxId for one sequence, and any other difference for another', () => {
    expect(sameButMaxId(int32, { ...int32, maxId: 9n ** 18n })).toBe(true);
    expect(sameButMaxId(int32, { ...int32, blockSize: 10n })).toBe(false);
    expect(sameButMaxId(int32, { ...int32, ids: 'opaque' })).toBe(false);
    // Keys are compared although they are not enumerable (a spread copy would lose them).
    const opaque: SequenceSettings = { ...int32, ids: 'opaque', startAfter: 0n, maxId: 10_000_000n };
    const keyed = withKey(opaque, new Uint8Array(32).fill(1), 'feistel-aes256-v2');
    expect(sameButMaxId(keyed, withKey(opaque, new Uint8Array(32).fill(1), 'feistel-aes256-v2'))).toBe(true);
    expect(sameButMaxId(keyed, withKey(opaque, new Uint8Array(32).fill(2), 'feistel-aes256-v2'))).toBe(false);
  });

  it('judges the rows a process reads again: retired anywhere ends it, a wider maxId everywhere widens it to the smallest', () => {
    const wide = { ...int32, maxId: 9_000_000_000n };
    expect(judgeRows(int32, [wide, { ...int32, retired: true }])).toEqual({ kind: 'retired' });
    expect(judgeRows(int32, [wide, { ...wide, maxId: 5_000_000_000n }])).toEqual({
      kind: 'widened',
      maxId: 5_000_000_000n,
    });
    // Mid-widening (one backend not yet): the bound every backend has is still the old one.
    expect(judgeRows(int32, [wide, int32])).toEqual({ kind: 'same' });
    expect(judgeRows(int32, [])).toEqual({ kind: 'same' });
    expect(judgeRows(int32, [{ ...wide, blockSize: 10n }])).toEqual({ kind: 'same' });
  });
});
