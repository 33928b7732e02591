import { randomBytes } from 'node:crypto';
import {
  IdPermutation,
  KEY_BYTES,
  OpaqueIdError,
  PERMUTATION_SCHEME,
  PERMUTATION_SCHEMES,
  type IdDomain,
  type PermutationScheme,
} from 'ticketd-client';

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

const SCHEMES = Object.keys(PERMUTATION_SCHEMES) as PermutationScheme[];
/**
 * P(1), P(2), P(3), P(10000), P(2^64-1) on the 64-bit domain and P(1000001), P(1000002), P(2^31-1)
 * on (1000000, 2^31-1], under FIXED_KEY. v1's were pinned by ticketd 0.4.0 and must never change.
 */
const KNOWN_ANSWERS: Record<PermutationScheme, { wide: string[]; migrated: string[] }> = {
  'feistel-aes256-v1': {
    wide: [
      '4170936916391936005',
      '11497033892217756525',
      '10486847599032308530',
      '11758923266092397213',
      '15460657188232883318',
    ],
    migrated: ['470899367', '555784327', '1205579781'],
  },
  'feistel-aes256-v2': {
    wide: [
      '161137186140244683',
      '4925333981018807988',
      '15030490344837552096',
      '1522677717517291130',
      '12983124191625804560',
    ],
    migrated: ['2062923675', '1968502527', '720934862'],
  },
};

describe.each(SCHEMES)('the opaque ID permutation, scheme %s', (scheme) => {
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
    const p = new IdPermutation(randomBytes(KEY_BYTES), domain, scheme);
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
    const p = new IdPermutation(randomBytes(KEY_BYTES), { startAfter: 0n, maxId: UINT64_MAX }, scheme);
    const samples = [1n, 2n, UINT64_MAX - 1n, UINT64_MAX, 1n << 53n, (1n << 53n) + 1n, 1n << 63n];
    for (let i = 0; i < 2000; i++)
      samples.push((BigInt.asUintN(64, randomBytes(8).readBigUInt64LE()) % UINT64_MAX) + 1n);
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
    new IdPermutation(key, domain, scheme).encodeRun(123_456_789n, 5000, a, 0);
    new IdPermutation(Buffer.from(key), domain, scheme).encodeRun(123_456_789n, 5000, b, 0);
    expect(b).toEqual(a);
    const other = new BigUint64Array(5000);
    new IdPermutation(randomBytes(KEY_BYTES), domain, scheme).encodeRun(123_456_789n, 5000, other, 0);
    expect(other.filter((y, k) => y === a[k]).length).toBe(0);
  });

  test('keeps its known answers (a change here would remap every stored opaque ID)', () => {
    const wide = new IdPermutation(FIXED_KEY, { startAfter: 0n, maxId: UINT64_MAX }, scheme);
    expect([1n, 2n, 3n, 10000n, UINT64_MAX].map((x) => wide.encode(x).toString())).toEqual(KNOWN_ANSWERS[scheme].wide);
    const migrated = new IdPermutation(FIXED_KEY, { startAfter: 1_000_000n, maxId: INT_MAX }, scheme);
    expect([1_000_001n, 1_000_002n, INT_MAX].map((x) => migrated.encode(x).toString())).toEqual(
      KNOWN_ANSWERS[scheme].migrated,
    );
  });

  test.each([
    ['64-bit', { startAfter: 0n, maxId: UINT64_MAX }],
    ['migrated 32-bit', { startAfter: 1_500_000n, maxId: INT_MAX }],
  ] as [string, IdDomain][])(
    'consecutive IDs of a %s domain come out unordered and spread over it',
    (_name, domain) => {
      const n = 200_000;
      const out = new BigUint64Array(n);
      new IdPermutation(randomBytes(KEY_BYTES), domain, scheme).encodeRun(domain.startAfter + 1_000_000n, n, out, 0);
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
    },
  );

  test('refuses a key of the wrong length and IDs outside the domain', () => {
    expect(() => new IdPermutation(randomBytes(16), { startAfter: 0n, maxId: 100n }, scheme)).toThrow(OpaqueIdError);
    const p = new IdPermutation(randomBytes(KEY_BYTES), { startAfter: 10n, maxId: 100n }, scheme);
    expect(() => p.encode(10n)).toThrow(/outside the sequence's domain \(10, 100\]/);
    expect(() => p.encode(101n)).toThrow(OpaqueIdError);
    expect(() => p.decode(0n)).toThrow(OpaqueIdError);
    expect(() => p.encodeRun(95n, 10, new BigUint64Array(10), 0)).toThrow(OpaqueIdError);
  });
});

describe('permutation schemes', () => {
  test("new sequences get FF1's 10 rounds; 0.4.0's sequences keep its 8", () => {
    expect(PERMUTATION_SCHEME).toBe('feistel-aes256-v2');
    expect(PERMUTATION_SCHEMES['feistel-aes256-v2'].rounds).toBeGreaterThanOrEqual(10);
    expect(PERMUTATION_SCHEMES['feistel-aes256-v1'].rounds).toBe(8);
  });

  test('the same key permutes otherwise under each scheme, and an unknown scheme is refused', () => {
    const domain = { startAfter: 0n, maxId: UINT64_MAX };
    const v1 = new BigUint64Array(1000);
    const v2 = new BigUint64Array(1000);
    new IdPermutation(FIXED_KEY, domain, 'feistel-aes256-v1').encodeRun(1n, 1000, v1, 0);
    new IdPermutation(FIXED_KEY, domain, 'feistel-aes256-v2').encodeRun(1n, 1000, v2, 0);
    expect(v1.filter((y, k) => y === v2[k]).length).toBe(0);
    expect(() => new IdPermutation(FIXED_KEY, domain, 'feistel-aes256-v9' as PermutationScheme)).toThrow(
      /scheme "feistel-aes256-v9" is unknown to this version/,
    );
  });
});
