import { NEW_LANE, needsCheck, step, mustRecheck, usable, type Lane, type LaneEvent } from '../../src/core/lane.js';
import { MAX_UINT64 } from '../../src/core/blocks.js';

/** Every transition of the lane (core/lane.ts): the one place that decides what may be served. */
const odd = { increment: 2n, offset: 1n };
const plain = { blockSize: 10n, startAfter: 0n, maxId: MAX_UINT64 };
const cls = (increment: bigint, residue: bigint, highest?: bigint, floor?: bigint) => ({
  increment,
  residue,
  highest,
  floor,
});
const lane = (over: Partial<Lane>): Lane => ({ ...NEW_LANE, ...over });
const serving = lane({ phase: 'serving' });
const claimed = (tickets: bigint[], settings = plain): LaneEvent => ({
  kind: 'claim-answers',
  tickets,
  answers: ['claimed'],
  refusedBecause: undefined,
  policy: 'preferred',
  settings,
});

describe('lane: checking before use', () => {
  it('starts unchecked, and may be asked for tickets only while unchecked or serving', () => {
    expect(NEW_LANE.phase).toBe('unchecked');
    expect(needsCheck(NEW_LANE)).toBe(true);
    expect(needsCheck(serving)).toBe(false);
    expect(usable(NEW_LANE)).toBe(true);
    expect(usable(serving)).toBe(true);
    expect(usable(lane({ phase: 'quarantined' }))).toBe(false);
    expect(usable(lane({ phase: 'exhausted' }))).toBe(false);
  });

  it('serves only after the check is done', () => {
    expect(step(NEW_LANE, { kind: 'checked' }).lane.phase).toBe('serving');
    expect(step(lane({ phase: 'quarantined', quarantine: 'x' }), { kind: 'checked' }).lane.phase).toBe('quarantined');
  });

  it('falls back to unchecked when stale, and leaves quarantine and exhaustion alone', () => {
    expect(step(serving, { kind: 'stale' }).lane.phase).toBe('unchecked');
    expect(step(lane({ phase: 'quarantined' }), { kind: 'stale' }).lane.phase).toBe('quarantined');
    expect(step(lane({ phase: 'exhausted' }), { kind: 'stale' }).lane.phase).toBe('exhausted');
  });

  it('must be checked again after an idle spell longer than the limit', () => {
    expect(mustRecheck(0, 5001, 5000)).toBe(true);
    expect(mustRecheck(0, 5000, 5000)).toBe(false);
    expect(mustRecheck(Number.NEGATIVE_INFINITY, 0, 5000)).toBe(true);
  });

  it('raises its mark to the highest ticket its peers hold, and asks for nothing when the counter is past it', () => {
    const r = step(NEW_LANE, {
      kind: 'counter-read',
      next: 103n,
      peers: [cls(2n, 1n, 101n), cls(2n, 0n, 900n)],
      stripe: odd,
      policy: 'advance',
    });
    expect(r.lane.mark).toBe(101n);
    expect(r.effects).toEqual([]);
    expect(r.lane.phase).toBe('unchecked');
  });

  it('advances a counter found at or below a used ticket past every used ticket plus the gap', () => {
    const r = step(lane({ mark: 5000n }), {
      kind: 'counter-read',
      next: 11n,
      peers: [cls(2n, 1n, 101n)],
      stripe: odd,
      policy: 'advance',
    });
    expect(r.effects).toEqual([
      { kind: 'advance', to: 5000n + 4096n * 2n + 1n, why: 'regressed', from: 11n, used: 101n },
    ]);
    expect(r.notes).toMatchObject([{ kind: 'regressed', outcome: 'advanced', ticket: 11n }]);
  });

  it('quarantines such a counter under the quarantine policy', () => {
    const r = step(NEW_LANE, {
      kind: 'counter-read',
      next: 11n,
      peers: [cls(2n, 1n, 101n)],
      stripe: odd,
      policy: 'quarantine',
    });
    expect(r.lane.phase).toBe('quarantined');
    expect(r.lane.quarantine).toMatch(/counter at 11, at or below ticket 101/);
    expect(r.effects).toEqual([]);
  });

  it('catches a laggard up with the leader, and leaves one close to it', () => {
    expect(step(NEW_LANE, { kind: 'leader-read', own: 1n, leader: 1001n, stripe: odd }).effects).toEqual([
      { kind: 'advance', to: 1001n, why: 'catch-up', from: 1n },
    ]);
    expect(step(NEW_LANE, { kind: 'leader-read', own: 999n, leader: 1001n, stripe: odd }).effects).toEqual([]);
  });
});

describe('lane: tickets, then claims, then blocks', () => {
  it('accepts tickets of its class above its mark, and raises the mark and last ticket', () => {
    const r = step(lane({ phase: 'serving', mark: 3n }), {
      kind: 'tickets',
      tickets: [5n, 7n],
      stripe: odd,
      where: 'A',
    });
    expect(r.accepted).toEqual([5n, 7n]);
    expect(r.lane).toMatchObject({ mark: 7n, lastTicket: 7n });
    expect(r.serve).toEqual([]);
  });

  it('stops at a ticket at or below the mark, and keeps the state when nothing was accepted', () => {
    const before = lane({ phase: 'serving', mark: 13n });
    const r = step(before, { kind: 'tickets', tickets: [13n], stripe: odd, where: 'A' });
    expect(r.accepted).toEqual([]);
    expect(r.refusal).toMatchObject({ ticket: 13n, regressed: true });
    expect(r.lane).toBe(before);
  });

  it('serves the blocks of claimed tickets, and nothing before the claims answered', () => {
    const r = step(serving, claimed([5n, 7n]));
    expect(r.serve).toEqual([
      { first: 50n, last: 59n },
      { first: 70n, last: 79n },
    ]);
    expect(r.withheld).toBe(false);
    expect(r.stop).toBe(false);
  });

  it('withholds every block when a peer held a claim, and hands the refusal on', () => {
    const r = step(serving, {
      ...(claimed([5n, 7n]) as Extract<LaneEvent, { kind: 'claim-answers' }>),
      answers: ['claimed', 'claimed-before'],
      refusedBecause: 'duplicate on B',
    });
    expect(r.serve).toEqual([]);
    expect(r.withheld).toBe(true);
    expect(r.refusal).toEqual({ ticket: 5n, regressed: true, reason: 'duplicate on B' });
    expect(r.notes).toEqual([{ kind: 'claimed-before', reason: 'duplicate on B' }]);
  });

  it('names the first ticket when the refusing peer gave no message', () => {
    const r = step(serving, {
      ...(claimed([5n]) as Extract<LaneEvent, { kind: 'claim-answers' }>),
      answers: ['claimed-before'],
    });
    expect(r.refusal?.reason).toMatch(/tickets from 5/);
  });

  it('unclaimed: preferred serves and starts one episode; required withholds', () => {
    const unclaimedEvent = {
      ...(claimed([5n]) as Extract<LaneEvent, { kind: 'claim-answers' }>),
      answers: ['failed' as const],
    };
    const first = step(serving, unclaimedEvent);
    expect(first.serve).toEqual([{ first: 50n, last: 59n }]);
    expect(first.lane.unclaimed).toBe(true);
    expect(first.notes).toEqual([{ kind: 'unclaimed', count: 1, served: true, started: true }]);
    expect(step(first.lane, unclaimedEvent).notes).toEqual([
      { kind: 'unclaimed', count: 1, served: true, started: false },
    ]);
    const required = step(serving, { ...unclaimedEvent, policy: 'required' });
    expect(required.serve).toEqual([]);
    expect(required.withheld).toBe(true);
    expect(required.stop).toBe(true);
  });

  it('ends the episode when a peer takes a claim again', () => {
    const r = step(lane({ phase: 'serving', unclaimed: true }), claimed([5n]));
    expect(r.lane.unclaimed).toBe(false);
    expect(r.notes).toEqual([{ kind: 'claimed-again' }]);
  });

  it('with no peer up: required stops before any ticket is fetched; preferred goes on', () => {
    const required = step(serving, { kind: 'no-peer', policy: 'required' });
    expect(required.stop).toBe(true);
    expect(required.lane.unclaimed).toBe(true);
    expect(required.notes).toEqual([{ kind: 'unclaimed', count: 0, served: false, started: true }]);
    expect(step(required.lane, { kind: 'no-peer', policy: 'required' }).notes).toMatchObject([{ started: false }]);
    expect(step(serving, { kind: 'no-peer', policy: 'preferred' })).toMatchObject({ stop: false, lane: serving });
  });

  it('exhausts the lane at the block that reaches maxId, serving that block', () => {
    const r = step(serving, claimed([5n, 7n], { blockSize: 10n, startAfter: 0n, maxId: 59n }));
    expect(r.serve).toEqual([{ first: 50n, last: 59n }]);
    expect(r.lane.phase).toBe('exhausted');
    expect(r.stop).toBe(true);
    expect(r.notes).toEqual([{ kind: 'exhausted', ticket: 5n }]);
  });

  it('reopens an exhausted lane when the sequence is widened, unchecked and with its mark kept; other phases stay', () => {
    const exhausted = step(serving, claimed([5n, 7n], { blockSize: 10n, startAfter: 0n, maxId: 59n })).lane;
    const reopened = step(exhausted, { kind: 'widened' }).lane;
    expect(reopened.phase).toBe('unchecked');
    expect(reopened.mark).toBe(exhausted.mark);
    expect(usable(reopened)).toBe(true);
    // Past the new bound, tickets above the old one serve: the block of ticket 7 fits maxId 99.
    const wider = step(
      step(reopened, { kind: 'checked' }).lane,
      claimed([9n], { blockSize: 10n, startAfter: 0n, maxId: 99n }),
    );
    expect(wider.serve).toEqual([{ first: 90n, last: 99n }]);
    for (const phase of ['serving', 'unchecked', 'quarantined'] as const)
      expect(step(lane({ phase }), { kind: 'widened' }).lane.phase).toBe(phase);
  });

  it('exhausts the lane at a ticket past maxId, serving nothing of it', () => {
    const r = step(serving, claimed([7n], { blockSize: 10n, startAfter: 0n, maxId: 59n }));
    expect(r.serve).toEqual([]);
    expect(r.lane.phase).toBe('exhausted');
    expect(r.withheld).toBe(false);
  });

  it('moves a counter still below startAfter forward instead of serving', () => {
    const r = step(serving, claimed([1n, 3n], { blockSize: 10n, startAfter: 100n, maxId: MAX_UINT64 }));
    expect(r.serve).toEqual([]);
    expect(r.stop).toBe(true);
    expect(r.effects).toEqual([{ kind: 'advance', to: 11n, why: 'below-start' }]);
    expect(r.lane.phase).toBe('serving');
  });

  it('exhausts the lane when the counter overflows its column', () => {
    const r = step(serving, { kind: 'overflow', ticket: 9n });
    expect(r.lane.phase).toBe('exhausted');
    expect(r.notes).toEqual([{ kind: 'exhausted', ticket: 9n }]);
  });
});

describe('lane: refusals and release', () => {
  it('quarantines a backend that returned a ticket of another class', () => {
    const r = step(serving, {
      kind: 'refused',
      refusal: { ticket: 4n, regressed: false, reason: 'not odd' },
      policy: 'advance',
    });
    expect(r.lane).toMatchObject({ phase: 'quarantined', quarantine: 'not odd' });
    expect(r.notes).toEqual([{ kind: 'wrong-class', ticket: 4n, reason: 'not odd' }]);
  });

  it('quarantines a regressed counter under the quarantine policy', () => {
    const r = step(serving, {
      kind: 'refused',
      refusal: { ticket: 5n, regressed: true, reason: 'went back' },
      policy: 'quarantine',
    });
    expect(r.lane.phase).toBe('quarantined');
    expect(r.notes).toMatchObject([{ kind: 'regressed', outcome: 'quarantined' }]);
  });

  it('asks to read the claims afresh for a regressed counter, then advances past them, its mark and the ticket seen', () => {
    const r = step(serving, {
      kind: 'refused',
      refusal: { ticket: 5n, regressed: true, reason: 'went back' },
      policy: 'advance',
    });
    expect(r.effects).toEqual([{ kind: 'read-used', seen: 5n }]);
    expect(r.lane.phase).toBe('serving');
    const read = step(lane({ phase: 'serving', mark: 7n }), {
      kind: 'used-read',
      seen: 5n,
      peers: [cls(2n, 1n, 301n)],
      stripe: odd,
    });
    expect(read.effects).toEqual([
      { kind: 'advance', to: 301n + 4096n * 2n + 1n, why: 'regressed', from: 5n, used: 301n },
    ]);
  });

  it('release: advances a counter still at or below a used ticket, then lifts the quarantine and checks again', () => {
    const quarantined = lane({ phase: 'quarantined', quarantine: 'went back', mark: 9n });
    const read = step(quarantined, { kind: 'release-read', next: 5n, peers: [cls(2n, 1n, 301n)], stripe: odd });
    expect(read.effects).toEqual([
      { kind: 'advance', to: 301n + 4096n * 2n + 1n, why: 'released', from: 5n, used: 301n },
    ]);
    expect(read.lane).toBe(quarantined);
    const released = step(quarantined, { kind: 'released', peers: [cls(2n, 1n, 301n)], stripe: odd });
    expect(released.lane).toMatchObject({ phase: 'unchecked', quarantine: undefined, mark: 301n });
  });

  it('release: asks for no advance when the counter is past every claim, and leaves an exhausted lane exhausted', () => {
    expect(
      step(NEW_LANE, { kind: 'release-read', next: 303n, peers: [cls(2n, 1n, 301n)], stripe: odd }).effects,
    ).toEqual([]);
    expect(step(lane({ phase: 'exhausted' }), { kind: 'released', peers: [], stripe: odd }).lane.phase).toBe(
      'exhausted',
    );
  });
});
