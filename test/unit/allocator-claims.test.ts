import { Allocator, type AllocatorOptions } from '../../src/allocator/allocator.js';
import type { AllocatorEvents } from '../../src/allocator/events.js';
import type { SequenceSettings } from '../../src/core/sequence.js';
import { MAX_UINT64, type IdRange } from '../../src/core/blocks.js';
import { BackendsUnavailableError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/logger.js';
import { fakeServers, type FakeServer } from '../support/fake-backend.js';

const SEQ: SequenceSettings = Object.freeze({
  name: 'orders',
  blockSize: 10n,
  startAfter: 0n,
  maxId: MAX_UINT64,
  ids: 'ordered',
});

/** What the allocator reported, by event. */
function recorder(): AllocatorEvents & { regressions: string[]; refused: string[]; unclaimedTickets: number } {
  const seen = {
    regressions: [] as string[],
    refused: [] as string[],
    unclaimedTickets: 0,
    ticketFetch: () => undefined,
    failover: () => undefined,
    regression: (backend: string, _s: string, action: string) => void seen.regressions.push(`${backend}:${action}`),
    claimRefused: (backend: string, _s: string, reason: string) => void seen.refused.push(`${backend}:${reason}`),
    unclaimed: (_b: string, _s: string, tickets: number) => void (seen.unclaimedTickets += tickets),
  };
  return seen;
}

/** IDs of the ranges, as strings, for checking repeats across processes. */
function ids(ranges: readonly IdRange[]): string[] {
  const out: string[] = [];
  for (const r of ranges) for (let id = r.first; id <= r.last; id++) out.push(String(id));
  return out;
}

describe('allocator with fake backends: claims decide', () => {
  let servers: FakeServer[];
  let a: FakeServer;
  let b: FakeServer;
  const open: Allocator[] = [];
  let now = 1_000_000;

  const allocator = (options: Partial<AllocatorOptions> = {}, fakes = fakeServers()): Allocator => {
    const made = new Allocator({
      backends: fakes.addresses,
      connect: fakes.connect,
      logger: silentLogger,
      clock: () => now,
      ...options,
    });
    open.push(made);
    return made;
  };

  let fakes: ReturnType<typeof fakeServers>;
  beforeEach(() => {
    fakes = fakeServers();
    servers = fakes.servers;
    [a, b] = servers as [FakeServer, FakeServer];
    for (const s of servers) s.sequences.set(SEQ.name, SEQ);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((x) => x.close()));
  });

  it('claims every ticket on a peer, never on the backend it came from, before serving its block', async () => {
    const alloc = allocator({}, fakes);
    const ranges = await alloc.fetchRanges(SEQ, 8);
    const tickets = ranges.map((r) => r.first / SEQ.blockSize);
    expect(tickets.length).toBeGreaterThan(0);
    for (const t of tickets) {
      const holder = t % 2n === 1n ? b : a;
      const source = t % 2n === 1n ? a : b;
      expect(holder.claims.get(SEQ.name)?.has(t)).toBe(true);
      expect(source.claims.get(SEQ.name)?.has(t) ?? false).toBe(false);
    }
  });

  it('an idle process whose own mark is old does not repeat what a busy one served after the counter went back', async () => {
    const events = recorder();
    // Prepared once and never again: only the claim can catch the repeat.
    const idle = allocator({ idleRevalidateMs: Number.MAX_SAFE_INTEGER, events }, fakes);
    const busy = allocator({}, fakes);
    const served = new Set(ids(await idle.fetchRanges(SEQ, 2)));
    for (let i = 0; i < 20; i++) for (const id of ids(await busy.fetchRanges(SEQ, 4))) served.add(id);
    const aLast = a.last.get(SEQ.name)!;
    // A replica promoted behind A's address: 20 tickets behind, still above the idle process's mark.
    a.regress(SEQ.name, aLast - 40n);
    let repeats = 0;
    for (let i = 0; i < 20; i++) {
      for (const id of ids(await idle.fetchRanges(SEQ, 4))) {
        if (served.has(id)) repeats++;
        served.add(id);
      }
    }
    expect(repeats).toBe(0);
    expect(events.refused).toContain('A:duplicate');
    expect(events.regressions).toContain('A:advanced');
    // Advanced past every claim: A serves again, above what the busy process took.
    expect(a.last.get(SEQ.name)!).toBeGreaterThan(aLast);
  });

  it('after an idle spell a process reads the claims before using the backend, and finds the regression there', async () => {
    const events = recorder();
    const idle = allocator({ events }, fakes);
    const busy = allocator({}, fakes);
    await idle.fetchRanges(SEQ, 2);
    for (let i = 0; i < 20; i++) await busy.fetchRanges(SEQ, 4);
    const before = a.replaces.get(SEQ.name)!;
    a.regress(SEQ.name, a.last.get(SEQ.name)! - 40n);
    now += 60_000;
    await idle.fetchRanges(SEQ, 4);
    expect(events.regressions).toContain('A:advanced');
    // Caught before any REPLACE on the regressed counter was claimed: nothing was refused.
    expect(events.refused).toEqual([]);
    expect(a.replaces.get(SEQ.name)!).toBeGreaterThan(before);
  });

  it('with no peer up, preferred serves on the process marks and counts the unclaimed tickets', async () => {
    const events = recorder();
    const alloc = allocator({ events }, fakes);
    await alloc.fetchRanges(SEQ, 2);
    b.down = new Error('connect ECONNREFUSED');
    let got = 0;
    for (let i = 0; i < 5; i++) got += (await alloc.fetchRanges(SEQ, 2)).length;
    expect(got).toBeGreaterThan(0);
    expect(events.unclaimedTickets).toBeGreaterThan(0);
  });

  it('with no peer up, required refuses with 503 and burns no ticket', async () => {
    const events = recorder();
    const alloc = allocator({ events, claimsPolicy: 'required' }, fakes);
    await alloc.fetchRanges(SEQ, 2);
    b.down = new Error('connect ECONNREFUSED');
    // The first refills find B failing and count it; once its breaker is open, A is not even asked.
    for (let i = 0; i < 3; i++) await alloc.fetchRanges(SEQ, 2).catch(() => undefined);
    const replaces = a.replaces.get(SEQ.name)!;
    await expect(alloc.fetchRanges(SEQ, 2)).rejects.toBeInstanceOf(BackendsUnavailableError);
    expect(a.replaces.get(SEQ.name)).toBe(replaces);
    expect(events.unclaimedTickets).toBeLessThanOrEqual(2);
  });

  it('prunes claims to a floor, and refuses a ticket at or below the floor', async () => {
    const events = recorder();
    const alloc = allocator({ events, claimsKept: 20, idleRevalidateMs: Number.MAX_SAFE_INTEGER }, fakes);
    const served = new Set<string>();
    for (let i = 0; i < 40; i++) for (const id of ids(await alloc.fetchRanges(SEQ, 4))) served.add(id);
    await new Promise((r) => setImmediate(r));
    const floor = b.floors.get(SEQ.name)?.[0]?.floor;
    expect(floor).toBeDefined();
    expect(b.claims.get(SEQ.name)!.size).toBeLessThan(60);
    // A process starting while B is too slow to show its claims, after A went back below the
    // floor: it has no mark and its rejoin learnt nothing (no claims, no leader to catch up with),
    // so only the claim's floor check is left.
    a.regress(SEQ.name, 0n);
    b.readError = new Error('Query inactivity timeout');
    const fresh = allocator({ events, idleRevalidateMs: Number.MAX_SAFE_INTEGER }, fakes);
    await fresh.fetchRanges(SEQ, 2).catch(() => undefined);
    b.readError = undefined;
    let repeats = 0;
    for (let i = 0; i < 10; i++) for (const id of ids(await fresh.fetchRanges(SEQ, 2))) if (served.has(id)) repeats++;
    expect(repeats).toBe(0);
    expect(events.refused).toContain('A:below-floor');
  });

  it('a quarantined backend is released after a re-check against the claims, with its counter advanced past them', async () => {
    const events = recorder();
    const alloc = allocator({ events, regressionPolicy: 'quarantine' }, fakes);
    for (let i = 0; i < 5; i++) await alloc.fetchRanges(SEQ, 4);
    const highest = a.last.get(SEQ.name)!;
    a.regress(SEQ.name, 1n);
    for (let i = 0; i < 3; i++) await alloc.fetchRanges(SEQ, 4);
    expect(alloc.sequenceStatus(SEQ.name)[0]!.quarantined).not.toBeNull();
    const result = await alloc.release(a.label, SEQ);
    expect(result.wasQuarantined).toBe(true);
    expect(result.quarantineReason).toEqual(expect.any(String));
    expect(BigInt(result.advancedTo!)).toBeGreaterThan(highest);
    expect(alloc.sequenceStatus(SEQ.name)[0]!.quarantined).toBeNull();
    const ranges = await alloc.fetchRanges(SEQ, 8);
    expect(ranges.some((r) => (r.first / SEQ.blockSize) % 2n === 1n)).toBe(true);
  });

  it('release refuses (503) when a peer cannot show its claims, and changes nothing', async () => {
    const alloc = allocator({ regressionPolicy: 'quarantine' }, fakes);
    await alloc.fetchRanges(SEQ, 4);
    b.down = new Error('connect ECONNREFUSED');
    await expect(alloc.release(a.label, SEQ)).rejects.toBeInstanceOf(BackendsUnavailableError);
  });

  it('with three backends a chunk is claimed on both peers', async () => {
    const three = fakeServers(3);
    for (const s of three.servers) s.sequences.set(SEQ.name, SEQ);
    const alloc = allocator({}, three);
    const ranges = await alloc.fetchRanges(SEQ, 3);
    for (const r of ranges) {
      const t = r.first / SEQ.blockSize;
      const holders = three.servers.filter((s) => s.claims.get(SEQ.name)?.has(t));
      expect(holders).toHaveLength(2);
    }
  });
});
