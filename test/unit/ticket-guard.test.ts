import { claimVerdict, floorUnder, highestUsed, judgeReplies, mayServeUnclaimed } from '../../src/core/claims.js';
import {
  accept,
  catchUpTarget,
  isRegressed,
  REGRESSION_GAP_TICKETS,
  regressionTarget,
} from '../../src/core/counters.js';
import { NEW_LANE, step } from '../../src/core/lane.js';

const odd = { increment: 2n, offset: 1n };
const cls = (increment: bigint, residue: bigint, highest?: bigint, floor?: bigint) => ({
  increment,
  residue,
  highest,
  floor,
});

describe('ticket guard: accept (parity and the process mark)', () => {
  it('accepts rising tickets of the backend’s class', () => {
    expect(accept([1n, 3n, 5n], odd, undefined, 'A')).toEqual({ accepted: [1n, 3n, 5n] });
  });

  it('stops at the first ticket at or below the mark, as a regression', () => {
    const { accepted, refused } = accept([13n, 15n], odd, 13n, 'A');
    expect(accepted).toEqual([]);
    expect(refused).toMatchObject({ ticket: 13n, regressed: true });
    expect(refused?.reason).toMatch(/at or below ticket 13/);
  });

  it('stops at a ticket that repeats one earlier in the same run', () => {
    expect(accept([5n, 7n, 7n, 9n], odd, 3n, 'A')).toMatchObject({
      accepted: [5n, 7n],
      refused: { ticket: 7n, regressed: true },
    });
  });

  it('refuses a ticket of another class, which advancing cannot fix', () => {
    const { accepted, refused } = accept([5n, 8n], odd, undefined, 'A');
    expect(accepted).toEqual([5n]);
    expect(refused).toMatchObject({ ticket: 8n, regressed: false });
    expect(refused?.reason).toMatch(/not ≡ 1 \(mod 2\)/);
  });
});

describe('ticket guard: claims decide', () => {
  it('refuses a chunk any peer holds a claim for, even if another peer took it', () => {
    expect(claimVerdict(['claimed', 'claimed-before'])).toBe('claimed-before');
    expect(claimVerdict(['failed', 'claimed-before'])).toBe('claimed-before');
  });

  it('serves a chunk one peer claimed, even when the others failed', () => {
    expect(claimVerdict(['failed', 'claimed'])).toBe('claimed');
  });

  it('refuses a claimed chunk that reaches down to a floor of an overlapping class', () => {
    const floors = [cls(2n, 1n, undefined, 83n), cls(2n, 0n, undefined, 900n)];
    expect(floorUnder([85n, 83n, 87n], floors, odd)).toBe(83n);
    expect(floorUnder([85n, 87n], floors, odd)).toBeUndefined();
    expect(floorUnder([5n], [], odd)).toBeUndefined();
  });

  it('judges each peer’s reply: an insert whose floors reach the chunk refuses it like a duplicate key', () => {
    const chunk = { sequence: 's', tickets: [85n, 87n], stripe: odd };
    const clean = judgeReplies(chunk, [
      { peer: 'B', reply: { kind: 'inserted', floors: [cls(2n, 1n, undefined, 83n)] } },
      { peer: 'C', reply: { kind: 'failed' } },
    ]);
    expect(clean).toEqual({ answers: ['claimed', 'failed'], refusal: undefined });
    const belowFloor = judgeReplies(chunk, [
      { peer: 'B', reply: { kind: 'inserted', floors: [cls(2n, 1n, undefined, 85n)] } },
      { peer: 'C', reply: { kind: 'duplicate', message: 'C holds a claim' } },
    ]);
    expect(belowFloor.answers).toEqual(['claimed-before', 'claimed-before']);
    expect(belowFloor.refusal).toEqual({
      cause: 'below-floor',
      reason: 'tickets of sequence s from 85 are at or below the claim floor 85 on backend B',
    });
    const duplicate = judgeReplies(chunk, [{ peer: 'C', reply: { kind: 'duplicate', message: 'C holds a claim' } }]);
    expect(duplicate).toEqual({
      answers: ['claimed-before'],
      refusal: { cause: 'duplicate', reason: 'C holds a claim' },
    });
  });

  it('calls a chunk unclaimed when no peer answered (or there is none), and only preferred serves it', () => {
    expect(claimVerdict(['failed', 'failed'])).toBe('unclaimed');
    expect(claimVerdict([])).toBe('unclaimed');
    expect(mayServeUnclaimed('preferred')).toBe(true);
    expect(mayServeUnclaimed('required')).toBe(false);
  });
});

describe('ticket guard: regressions', () => {
  it('takes the highest claim or floor of the overlapping classes as used', () => {
    const classes = [cls(2n, 1n, 101n, 50n), cls(2n, 0n, 9000n), cls(2n, 1n, undefined, 300n), cls(4n, 3n, 777n)];
    expect(highestUsed(classes, odd)).toBe(777n);
    expect(highestUsed([cls(2n, 0n, 9000n)], odd)).toBeUndefined();
  });

  it('calls a counter regressed when its next ticket is at or below a used one', () => {
    expect(isRegressed(99n, 101n)).toBe(true);
    expect(isRegressed(101n, 101n)).toBe(true);
    expect(isRegressed(102n, 101n)).toBe(false);
    expect(isRegressed(5n, undefined)).toBe(false);
    // A table recreated empty by a restore starts at 1: regressed too.
    expect(isRegressed(1n, 101n)).toBe(true);
  });

  it('advances a regressed counter past every used ticket known, plus the gap', () => {
    expect(regressionTarget([101n, undefined, 555n, 7n], odd)).toBe(555n + REGRESSION_GAP_TICKETS * 2n + 1n);
    expect(regressionTarget([undefined], odd)).toBe(REGRESSION_GAP_TICKETS * 2n + 1n);
  });

  it('catches up a laggard only when it trails the leader by more than the minimum lag', () => {
    expect(catchUpTarget(1n, 1001n, odd)).toBe(1001n);
    expect(catchUpTarget(999n, 1001n, odd)).toBeUndefined();
  });
});

describe('ticket guard: process marks', () => {
  it('keeps a mark per lane that only rises', () => {
    const first = step(NEW_LANE, { kind: 'tickets', tickets: [9n], stripe: odd, where: 'A' }).lane;
    const after = step(first, {
      kind: 'counter-read',
      next: 11n,
      peers: [cls(2n, 1n, 3n)],
      stripe: odd,
      policy: 'advance',
    }).lane;
    expect(after.mark).toBe(9n);
    expect(NEW_LANE.mark).toBeUndefined();
  });
});
