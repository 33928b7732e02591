import { FENCE_SLACK_MS, MIN_FENCE_TICKETS, planFence, type ClaimHistory } from '../../src/core/fence.js';

const settings = { blockSize: 10n, startAfter: 0n, maxId: (1n << 64n) - 1n };
const history = (
  residue: bigint,
  lowest: bigint,
  highest: bigint,
  spanMs: number,
  ageMs: number,
  claims = 100,
): ClaimHistory => ({ increment: 2n, residue, lowest, highest, claims, spanMs, ageMs });

describe('planFence', () => {
  it('moves past the highest ticket by the summed class rates times the time since the newest claim, times the margin', () => {
    // Class 1: 2,000 counter steps in 10 s (200/s); class 0: 1,000 in 10 s (100/s), on two peers.
    const plan = planFence({
      settings,
      highestTicket: 5000n,
      increment: 2n,
      margin: 2,
      histories: [history(1n, 1n, 2001n, 10_000, 30_000), history(0n, 2n, 1002n, 10_000, 40_000)],
    });
    const expected = BigInt(Math.ceil((300 * (30_000 + FENCE_SLACK_MS) * 2) / 1000));
    expect(plan).toMatchObject({
      basis: 'rate',
      advance: expected,
      nextTicket: 5000n + expected + 1n,
      sinceMs: 30_000,
      exhausts: false,
    });
    expect(plan.ticketsPerSecond).toBeCloseTo(300);
  });

  it('takes the fastest peer per class, not their sum (one class claimed on two peers is one stream)', () => {
    const plan = planFence({
      settings,
      highestTicket: 0n,
      increment: 2n,
      margin: 1,
      histories: [history(1n, 1n, 1001n, 10_000, 0), history(1n, 1n, 2001n, 10_000, 0)],
    });
    expect(plan.ticketsPerSecond).toBeCloseTo(200);
  });

  it('reads a span under a second as a second, so a burst does not divide by ~0', () => {
    const plan = planFence({
      settings,
      highestTicket: 0n,
      increment: 2n,
      margin: 1,
      histories: [history(1n, 1n, 101n, 3, 0)],
    });
    expect(plan.ticketsPerSecond).toBeCloseTo(100);
  });

  it('uses the operator bound, times the increment, when given', () => {
    const plan = planFence({
      settings,
      highestTicket: 100n,
      increment: 16n,
      margin: 4,
      ticketsBound: 50_000n,
      histories: [history(1n, 1n, 2001n, 10_000, 30_000)],
    });
    expect(plan).toMatchObject({ basis: 'bound', advance: 800_000n, nextTicket: 800_101n });
  });

  it('moves at least the minimum, and says when no claim gives a rate', () => {
    const plan = planFence({
      settings,
      highestTicket: 7n,
      increment: 2n,
      margin: 4,
      histories: [history(1n, 7n, 7n, 0, 5_000, 1)],
    });
    expect(plan).toMatchObject({
      basis: 'minimum',
      advance: MIN_FENCE_TICKETS * 2n,
      ticketsPerSecond: undefined,
      sinceMs: 5_000,
    });
    expect(planFence({ settings, highestTicket: 7n, increment: 2n, margin: 4, histories: [] })).toMatchObject({
      basis: 'minimum',
      sinceMs: undefined,
    });
  });

  it('says when the fence would leave no block at or below maxId', () => {
    const small = { blockSize: 100n, startAfter: 0n, maxId: 2_147_483_647n };
    expect(
      planFence({ settings: small, highestTicket: 21_474_000n, increment: 2n, margin: 4, histories: [] }).exhausts,
    ).toBe(true);
    expect(planFence({ settings: small, highestTicket: 1000n, increment: 2n, margin: 4, histories: [] }).exhausts).toBe(
      false,
    );
  });
});
