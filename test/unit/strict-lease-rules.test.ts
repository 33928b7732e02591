import {
  liveLeader,
  majority,
  MAX_STRICT_STEP,
  mayTake,
  MIN_STRICT_STEP,
  nextEpoch,
  nextStep,
  servesUntil,
  startAbove,
  STRICT_LEASE_MS,
  STRICT_MARGIN_MS,
  type StrictRow,
} from '../../src/core/strict.js';

/** A backend's lease row, by its own clock at 10 s. */
const row = (over: Partial<StrictRow>): StrictRow => ({
  epoch: 1n,
  leader: 'a',
  leaderUrl: 'http://a',
  expiresMs: 12_000,
  bound: 0n,
  nowMs: 10_000,
  ...over,
});

/** The pure rules a strict sequence's leadership stands on (core/strict.ts). */
describe('strict lease rules', () => {
  it('a majority is more than half', () => {
    expect([1, 2, 3, 4, 5].map(majority)).toEqual([1, 2, 2, 3, 3]);
  });

  it('the live leader is the highest epoch among unexpired rows that name one', () => {
    expect(liveLeader([])).toBeUndefined();
    expect(liveLeader([row({ leader: '' }), row({ expiresMs: 10_000 })])).toBeUndefined();
    expect(
      liveLeader([
        row({ epoch: 3n, leader: 'b', leaderUrl: 'http://b' }),
        row({ epoch: 2n }),
        row({ epoch: 4n, expiresMs: 9_000 }),
      ]),
    ).toEqual({ epoch: 3n, leader: 'b', leaderUrl: 'http://b' });
  });

  it('a candidate asks for an epoch above every one it read', () => {
    expect(nextEpoch([])).toBe(1n);
    expect(nextEpoch([row({ epoch: 7n }), row({ epoch: 9n }), row({ epoch: 2n })])).toBe(10n);
  });

  it('a row lets a higher epoch in only when its lease expired or is the candidate’s own', () => {
    expect(mayTake(row({ epoch: 1n }), 1n, 'b')).toBe(false);
    expect(mayTake(row({ epoch: 1n }), 2n, 'b')).toBe(false);
    expect(mayTake(row({ epoch: 1n }), 2n, 'a')).toBe(true);
    expect(mayTake(row({ epoch: 1n, expiresMs: 10_000 }), 2n, 'b')).toBe(true);
    expect(mayTake(row({ epoch: 5n, expiresMs: 0 }), 5n, 'b')).toBe(false);
  });

  it('a new leader starts above every bound of its majority, and never below startAfter', () => {
    expect(startAbove([], 100n)).toBe(100n);
    expect(startAbove([50n, 4000n, 3000n], 100n)).toBe(4000n);
    expect(startAbove([50n], 100n)).toBe(100n);
  });

  it('the bound step doubles under a second, halves over ten, within its limits', () => {
    expect(nextStep(4000n, 500)).toBe(8000n);
    expect(nextStep(MAX_STRICT_STEP, 500)).toBe(MAX_STRICT_STEP);
    expect(nextStep(8000n, 11_000)).toBe(4000n);
    expect(nextStep(MIN_STRICT_STEP, 11_000)).toBe(MIN_STRICT_STEP);
    expect(nextStep(8000n, 5000)).toBe(8000n);
  });

  it('a lease is used until its length less the drift margin after the write was sent', () => {
    expect(servesUntil(1000)).toBe(1000 + STRICT_LEASE_MS - STRICT_MARGIN_MS);
    expect(servesUntil(1000)).toBeLessThan(1000 + STRICT_LEASE_MS);
  });
});
