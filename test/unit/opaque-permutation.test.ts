import { randomBytes } from 'node:crypto';
import { IdPermutation, KEY_BYTES, OpaqueIdError, type IdDomain } from 'ticketd-client';

const INT_MAX = 2147483647n;
const UINT64_MAX = (1n << 64n) - 1n;
/** Fixed so the known answers below pin the construction: stored keys depend on it never changing. */
const FIXED_KEY = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex');

function encodeAll(p: IdPermutation, domain: IdDomain): BigUint64Array {
  const size = Number(domain.maxId - domain.startAfter);
  const out = new BigUint64Array(size);
  p.encodeRun(domain.startAfter + 1n, size, out, 0);
  return out;
}

describe('the opaque ID permutation', () => {
  const domains: [string, IdDomain][] = [
    ['a power of two (4,096)', { startAfter: 0n, maxId: 4096n }],
    ['not a power of two (3,000)', { startAfter: 0n, maxId: 3000n }],
    ['one past a power of two (2,049: cycle-walks most)', { startAfter: 0n, maxId: 2049n }],
    ['shifted (777, 3,778]', { startAfter: 777n, maxId: 3778n }],
    ['32-bit bounded: the top 5,000 of a signed INT', { startAfter: INT_MAX - 5000n, maxId: INT_MAX }],
    ['at the top of 64 bits', { startAfter: UINT64_MAX - 3001n, maxId: UINT64_MAX }],
    ['two IDs', { startAfter: 9n, maxId: 11n }],
    ['one ID', { startAfter: 9n, maxId: 10n }],
  ];

  test.each(domains)('is a bijection of a domain %s: every value hit once, none outside', (_name, domain) => {
    const p = new IdPermutation(randomBytes(KEY_BYTES), domain);
    const out = encodeAll(p, domain);
    const seen = new Set<bigint>();
    for (const y of out) {
      expect(y > domain.startAfter && y <= domain.maxId).toBe(true);
      seen.add(y);
    }
    expect(seen.size).toBe(out.length);
    // decode undoes encode for every value, and one-at-a-time encoding agrees with the batch.
    for (let k = 0; k < out.length; k++) {
      const ordered = domain.startAfter + 1n + BigInt(k);
      expect(p.decode(out[k]!)).toBe(ordered);
      if (k % 101 === 0) expect(p.encode(ordered)).toBe(out[k]);
    }
  });

  test('decode(encode(x)) = x across a 64-bit domain, including its ends', () => {
    const p = new IdPermutation(randomBytes(KEY_BYTES), { startAfter: 0n, maxId: UINT64_MAX });
    const samples = [1n, 2n, UINT64_MAX - 1n, UINT64_MAX, 1n << 53n, (1n << 53n) + 1n, 1n << 63n];
    for (let i = 0; i < 2000; i++) samples.push((BigInt.asUintN(64, randomBytes(8).readBigUInt64LE()) % UINT64_MAX) + 1n);
    for (const x of samples) {
      const y = p.encode(x);
      expect(y >= 1n && y <= UINT64_MAX).toBe(true);
      expect(p.decode(y)).toBe(x);
    }
  });

  test('the same key maps alike in two instances; another key maps otherwise', () => {
    const domain = { startAfter: 0n, maxId: UINT64_MAX };
    const key = randomBytes(KEY_BYTES);
    const a = new BigUint64Array(5000);
    const b = new BigUint64Array(5000);
    new IdPermutation(key, domain).encodeRun(123_456_789n, 5000, a, 0);
    new IdPermutation(Buffer.from(key), domain).encodeRun(123_456_789n, 5000, b, 0);
    expect(b).toEqual(a);
    const other = new BigUint64Array(5000);
    new IdPermutation(randomBytes(KEY_BYTES), domain).encodeRun(123_456_789n, 5000, other, 0);
    expect(other.filter((y, k) => y === a[k]).length).toBe(0);
  });

  test('keeps its known answers (a change here would remap every stored opaque ID)', () => {
    const wide = new IdPermutation(FIXED_KEY, { startAfter: 0n, maxId: UINT64_MAX });
    expect([1n, 2n, 3n, 10000n, UINT64_MAX].map((x) => wide.encode(x).toString())).toEqual([
      '4170936916391936005',
      '11497033892217756525',
      '10486847599032308530',
      '11758923266092397213',
      '15460657188232883318',
    ]);
    const migrated = new IdPermutation(FIXED_KEY, { startAfter: 1_000_000n, maxId: INT_MAX });
    expect([1_000_001n, 1_000_002n, INT_MAX].map((x) => migrated.encode(x).toString())).toEqual(['470899367', '555784327', '1205579781']);
  });

  test.each([
    ['64-bit', { startAfter: 0n, maxId: UINT64_MAX }],
    ['migrated 32-bit', { startAfter: 1_500_000n, maxId: INT_MAX }],
  ] as [string, IdDomain][])('consecutive IDs of a %s domain come out unordered and spread over it', (_name, domain) => {
    const n = 200_000;
    const out = new BigUint64Array(n);
    new IdPermutation(randomBytes(KEY_BYTES), domain).encodeRun(domain.startAfter + 1_000_000n, n, out, 0);
    let increases = 0;
    for (let k = 1; k < n; k++) if (out[k]! > out[k - 1]!) increases++;
    // A random order increases about half the time: 0.5 ± 0.005 is over 4 standard deviations wide.
    expect(Math.abs(increases / (n - 1) - 0.5)).toBeLessThan(0.005);
    const buckets = new Array<number>(16).fill(0);
    const size = domain.maxId - domain.startAfter;
    for (const y of out) buckets[Number(((y - domain.startAfter - 1n) * 16n) / size)]!++;
    // Chi-square with 15 degrees of freedom: 50 is far beyond its 0.9999 quantile (~42).
    const expected = n / 16;
    const chi = buckets.reduce((sum, c) => sum + (c - expected) ** 2 / expected, 0);
    expect(chi).toBeLessThan(50);
  });

  test('refuses a key of the wrong length and IDs outside the domain', () => {
    expect(() => new IdPermutation(randomBytes(16), { startAfter: 0n, maxId: 100n })).toThrow(OpaqueIdError);
    const p = new IdPermutation(randomBytes(KEY_BYTES), { startAfter: 10n, maxId: 100n });
    expect(() => p.encode(10n)).toThrow(/outside the sequence's domain \(10, 100\]/);
    expect(() => p.encode(101n)).toThrow(OpaqueIdError);
    expect(() => p.decode(0n)).toThrow(OpaqueIdError);
    expect(() => p.encodeRun(95n, 10, new BigUint64Array(10), 0)).toThrow(OpaqueIdError);
  });
});
