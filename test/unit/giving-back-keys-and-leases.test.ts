/** The pure parts of giving IDs back: which sequences may, the keys of tails, leases, and a cache's surrender. */
import { RangeCache } from '../../src/cache/range-cache.js';
import { keyOf, reuseAllowed, tailOf } from '../../src/core/returned-ranges.js';
import { parseSequenceSettings, sameSettings } from '../../src/core/sequence.js';
import { LeaseInvalidError } from '../../src/core/errors.js';
import { signLease, verifyLease } from '../../src/service/block-leases.js';

const secret = new Uint8Array(32).fill(7);
const other = new Uint8Array(32).fill(9);

describe('which sequences take IDs back', () => {
  it('opaque always, ordered only with reuse, strict never', () => {
    expect(reuseAllowed(parseSequenceSettings('o', { blockSize: 1, ids: 'opaque' }))).toBe(true);
    expect(reuseAllowed(parseSequenceSettings('p', { blockSize: 1 }))).toBe(false);
    expect(reuseAllowed(parseSequenceSettings('p', { blockSize: 1, reuse: true }))).toBe(true);
    expect(reuseAllowed(parseSequenceSettings('s', { blockSize: 1, ids: 'strict' }))).toBe(false);
    expect(() => parseSequenceSettings('s', { blockSize: 1, ids: 'strict', reuse: true })).toThrow(/strict/);
    expect(() => parseSequenceSettings('o', { blockSize: 1, ids: 'opaque', reuse: false })).toThrow(/opaque/);
    expect(() => parseSequenceSettings('p', { blockSize: 1, reuse: 'yes' })).toThrow(/reuse/);
  });

  it('a sequence with reuse is not the same as one without (a PUT that differs is a conflict)', () => {
    const plain = parseSequenceSettings('p', { blockSize: 1 });
    const reusing = parseSequenceSettings('p', { blockSize: 1, reuse: true });
    expect(sameSettings(plain, reusing)).toBe(false);
    expect(sameSettings(reusing, parseSequenceSettings('p', { blockSize: 1, reuse: true }))).toBe(true);
  });
});

describe('the key of a tail given back', () => {
  it('two returns of one range share a key whatever their first ID; a reused range given back again has a new one', () => {
    const block = { first: 100n, last: 199n };
    const once = tailOf('s', block, 150n)!;
    const twice = tailOf('s', block, 120n)!;
    expect(keyOf(once)).toBe(keyOf(twice));
    const again = tailOf('s', { first: once.first, last: once.last, generation: once.generation }, 170n)!;
    expect(keyOf(again)).not.toBe(keyOf(once));
    expect(again.generation).toBe(2);
  });

  it('refuses a from outside the range', () => {
    expect(tailOf('s', { first: 100n, last: 199n }, 99n)).toBeUndefined();
    expect(tailOf('s', { first: 100n, last: 199n }, 200n)).toBeUndefined();
  });
});

describe('leases', () => {
  it('verify with the secret that signed them, for their sequence and range only', () => {
    const lease = signLease(secret, 'seq', { first: 100n, last: 199n });
    expect(verifyLease([other, secret], 'seq', lease)).toEqual({ first: 100n, last: 199n, generation: 0 });
    expect(() => verifyLease([other], 'seq', lease)).toThrow(LeaseInvalidError);
    expect(() => verifyLease([secret], 'other', lease)).toThrow(LeaseInvalidError);
    expect(() => verifyLease([secret], 'seq', lease.replace('.100.', '.99.'))).toThrow(LeaseInvalidError);
    expect(() => verifyLease([secret], 'seq', lease.replace('.0.', '.1.'))).toThrow(LeaseInvalidError);
    expect(() => verifyLease([secret], 'seq', 'not a lease')).toThrow(LeaseInvalidError);
  });
});

describe('a cache surrendering what it holds', () => {
  it('closes for takes first, and hands over the unused part of each range with its generation', async () => {
    let refills = 0;
    const cache = new RangeCache({
      sequence: 's',
      blockSize: 100n,
      // One refill's ranges; the prefetch after it never answers (its ranges would come after the surrender).
      refill: () =>
        refills++ === 0
          ? Promise.resolve([
              { first: 100n, last: 199n, generation: 3 },
              { first: 300n, last: 399n },
            ])
          : new Promise(() => undefined),
      clock: () => 0,
      onBackgroundError: () => undefined,
    });
    await cache.take(30);
    expect(cache.surrender()).toEqual([
      { first: 130n, last: 199n, generation: 3 },
      { first: 300n, last: 399n, generation: 0 },
    ]);
    expect(cache.available).toBe(0);
    expect(cache.tryTake(1)).toBeUndefined();
    await expect(cache.take(1)).rejects.toThrow(/stopping/);
    expect(refills).toBeLessThanOrEqual(2);
  });
});
