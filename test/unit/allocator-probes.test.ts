import { Allocator } from '../../src/allocator/allocator.js';
import type { SequenceSettings } from '../../src/core/sequence.js';
import { MAX_UINT64 } from '../../src/core/blocks.js';
import { silentLogger } from '../../src/logger.js';
import { fakeServers } from '../support/fake-backend.js';

const SEQ: SequenceSettings = Object.freeze({
  name: 'probed',
  blockSize: 10n,
  startAfter: 0n,
  maxId: MAX_UINT64,
  ids: 'ordered',
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('allocator with fake backends: a backend that went down comes back by itself', () => {
  it('keeps probing an open backend in the background until it answers, then uses it again after checking the claims', async () => {
    const fakes = fakeServers();
    const [a, b] = fakes.servers as [(typeof fakes.servers)[0], (typeof fakes.servers)[0]];
    for (const s of fakes.servers) s.sequences.set(SEQ.name, SEQ);
    const alloc = new Allocator({
      backends: fakes.addresses,
      connect: fakes.connect,
      logger: silentLogger,
      breakerOptions: { failureThreshold: 2, initialBackoffMs: 10, maxBackoffMs: 40 },
    });
    try {
      await alloc.fetchRanges(SEQ, 4);
      a.down = new Error('connect ECONNREFUSED');
      b.down = a.down;
      // Requests while every backend is open probe them on demand; those failures push each
      // breaker's next probe later than the background timer already set. That timer then fires
      // early, and must set another rather than end the chain (the first session's bug).
      for (let i = 0; i < 12; i++) {
        await alloc.fetchRanges(SEQ, 4).catch(() => undefined);
        await sleep(7);
      }
      expect(alloc.status().map((s) => s.state)).toEqual(['open', 'open']);
      a.down = undefined;
      b.down = undefined;
      // No request needed: the background probes close the breakers.
      for (let i = 0; i < 100 && alloc.status().some((s) => s.state !== 'up'); i++) await sleep(10);
      expect(alloc.status().map((s) => s.state)).toEqual(['up', 'up']);
      const before = a.replaces.get(SEQ.name)!;
      const ranges = await alloc.fetchRanges(SEQ, 8);
      expect(a.replaces.get(SEQ.name)!).toBeGreaterThan(before);
      // A's tickets were claimed on B before they were served.
      const fromA = ranges.map((r) => r.first / SEQ.blockSize).filter((t) => t % 2n === 1n);
      expect(fromA.length).toBeGreaterThan(0);
      for (const t of fromA) expect(b.claims.get(SEQ.name)?.has(t)).toBe(true);
    } finally {
      await alloc.close();
    }
  });
});
