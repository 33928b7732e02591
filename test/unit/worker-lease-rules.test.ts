import {
  acceptsClaim,
  grantRecord,
  highWaterAfter,
  isFree,
  isLive,
  judgeClaims,
  nextLeaseEpoch,
  ownerOf,
  parsePoolSettings,
  poolSize,
  poolToJson,
  releasedRecord,
  renewedRecord,
  samePool,
  workersOwnedBy,
  type LeaseRecord,
  type ServerTime,
} from '../../src/core/worker-leases.js';
import { BadRequestError } from '../../src/core/errors.js';

const POOL = parsePoolSettings('web', { workerBits: 3, ttlMs: 10_000, maxSkewMs: 500 }, [1n, 2n]);
const at = (ms: number): ServerTime => ({ nowMs: ms, nowUs: BigInt(ms) * 1000n });

describe('worker pools: settings and owners', () => {
  it('fills defaults, and makes the reuse delay at least TTL plus skew', () => {
    const p = parsePoolSettings('api', {}, [2n, 1n]);
    expect(p).toMatchObject({ workerBits: 10, ttlMs: 30_000, maxSkewMs: 1000, reuseDelayMs: 31_000, owners: [2n, 1n] });
    expect(POOL.reuseDelayMs).toBe(10_500);
    expect(poolSize(POOL)).toBe(8);
    expect(() => parsePoolSettings('api', { ttlMs: 10_000, reuseDelayMs: 9_000 }, [1n])).toThrow(
      /reuseDelayMs must be at least ttlMs \+ maxSkewMs = 11000; got 9000/,
    );
    expect(() => parsePoolSettings('Api', {}, [1n])).toThrow(BadRequestError);
    expect(() => parsePoolSettings('api', [], [1n])).toThrow(/body must be a JSON object/);
    expect(() => parsePoolSettings('api', { workerBits: 2.5 }, [1n])).toThrow(/workerBits must be an integer/);
  });

  it('gives each worker ID exactly one owner, round robin over the owners', () => {
    expect([0, 1, 2, 3].map((w) => ownerOf(POOL, w))).toEqual([1n, 2n, 1n, 2n]);
    expect(workersOwnedBy(POOL, 1n)).toEqual([0, 2, 4, 6]);
    expect(workersOwnedBy(POOL, 2n)).toEqual([1, 3, 5, 7]);
    expect(workersOwnedBy(POOL, 3n)).toEqual([]);
  });

  it('compares pools field by field, owners included', () => {
    expect(samePool(POOL, parsePoolSettings('web', { workerBits: 3, ttlMs: 10_000, maxSkewMs: 500 }, [1n, 2n]))).toBe(
      true,
    );
    expect(samePool(POOL, parsePoolSettings('web', { workerBits: 3, ttlMs: 10_000, maxSkewMs: 500 }, [1n, 3n]))).toBe(
      false,
    );
    expect(samePool(POOL, parsePoolSettings('web', { workerBits: 4, ttlMs: 10_000, maxSkewMs: 500 }, [1n, 2n]))).toBe(
      false,
    );
    expect(poolToJson(POOL)).toEqual({
      name: 'web',
      workerBits: 3,
      size: 8,
      ttlMs: 10_000,
      maxSkewMs: 500,
      reuseDelayMs: 10_500,
      owners: ['1', '2'],
    });
  });
});

describe('worker leases: free, live, high-water marks and epochs', () => {
  const granted = grantRecord(POOL, 4, 'pod-a', 7n, 100, at(1_000));

  it('holds a granted worker ID until its expiry plus the reuse delay', () => {
    expect(granted).toMatchObject({ expiresMs: 11_000, freeMs: 21_500, highWaterMs: 100 });
    expect(isLive(granted, at(10_999))).toBe(true);
    expect(isLive(granted, at(11_000))).toBe(false);
    expect(isFree(granted, at(21_499))).toBe(false);
    expect(isFree(granted, at(21_500))).toBe(true);
    expect(isFree(undefined, at(0))).toBe(true);
  });

  it('renews from now, and frees at once on release', () => {
    const renewed = renewedRecord(POOL, granted, at(5_000));
    expect(renewed).toMatchObject({ epoch: 7n, expiresMs: 15_000, freeMs: 25_500 });
    const released = releasedRecord(renewed, 6_000, at(6_100));
    expect(released).toMatchObject({ expiresMs: 6_100, freeMs: 6_100, releasedMs: 6_100, lastUsedMs: 6_000 });
    expect(isLive(released, at(6_100))).toBe(false);
    expect(isFree(released, at(6_100))).toBe(true);
  });

  it('puts the next holder above whatever an earlier one may have used', () => {
    // Unreleased: its expiry plus the skew bound, since its clock may run ahead by that much.
    expect(highWaterAfter(granted, POOL)).toBe(11_500);
    // Released: the last timestamp it used, and never below what it was given itself.
    expect(highWaterAfter(releasedRecord(granted, 3_000, at(4_000)), POOL)).toBe(3_000);
    expect(highWaterAfter(releasedRecord(granted, 50, at(4_000)), POOL)).toBe(100);
    expect(highWaterAfter(undefined, POOL)).toBe(0);
    const placeholder: LeaseRecord = {
      workerId: 4,
      epoch: 0n,
      holder: '',
      highWaterMs: 0,
      expiresMs: 0,
      freeMs: 0,
      releasedMs: undefined,
      lastUsedMs: undefined,
    };
    expect(highWaterAfter(placeholder, POOL)).toBe(0);
    expect(isLive(placeholder, at(0))).toBe(false);
  });

  it('makes epochs grow past every recorded one and past the clock in microseconds', () => {
    expect(nextLeaseEpoch(0n, at(1_000))).toBe(1_000_000n);
    expect(nextLeaseEpoch(5_000_000n, at(1_000))).toBe(5_000_001n);
  });

  it('refuses a worker ID while any other backend holds a live claim of it, and carries the highest mark and epoch', () => {
    const other = grantRecord(POOL, 4, 'pod-b', 9n, 0, at(2_000));
    const held = judgeClaims(POOL, 4, [{ backend: 'B', record: other, now: at(3_000) }]);
    expect(held.free).toBe(false);
    if (!held.free) expect(held.reason).toMatch(/backend B holds a claim of worker 4 of pool web \(epoch 9\)/);
    const free = judgeClaims(POOL, 4, [
      { backend: 'B', record: other, now: at(other.freeMs) },
      { backend: 'C', record: undefined, now: at(0) },
    ]);
    expect(free).toEqual({ free: true, highWaterMs: 12_500, epochAbove: 9n });
  });

  it('takes a claim when its record is free or already names the epoch, and refuses another live one', () => {
    expect(acceptsClaim(undefined, 7n, at(0))).toBe(true);
    expect(acceptsClaim(granted, 7n, at(2_000))).toBe(true);
    expect(acceptsClaim(granted, 8n, at(2_000))).toBe(false);
    expect(acceptsClaim(granted, 8n, at(granted.freeMs))).toBe(true);
  });
});
