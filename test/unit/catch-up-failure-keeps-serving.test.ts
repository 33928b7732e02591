import { Allocator } from '../../src/allocator/allocator.js';
import { MAX_UINT64 } from '../../src/core/blocks.js';
import { BackendAccessDeniedError } from '../../src/core/errors.js';
import type { SequenceSettings } from '../../src/core/sequence.js';
import { capturingLogger } from '../support/ticketd.js';
import { fakeServers } from '../support/fake-backend.js';

const SEQ: SequenceSettings = Object.freeze({
  name: 'behind',
  blockSize: 10n,
  startAfter: 0n,
  maxId: MAX_UINT64,
  ids: 'ordered',
});

describe('a catch-up that fails never takes a backend out of service', () => {
  it('A far behind B, its advance refused: logged once as a warning, and A still issues, up and not refused', async () => {
    const fakes = fakeServers();
    const [a, b] = fakes.servers as [(typeof fakes.servers)[0], (typeof fakes.servers)[0]];
    for (const s of fakes.servers) s.sequences.set(SEQ.name, SEQ);
    // B's counter far ahead (ticket 20,000), A's at its start: more than 64 tickets behind.
    b.last.set(SEQ.name, 20_000n);
    a.advanceError = new BackendAccessDeniedError('backend A: ALTER command denied');
    const { logger, lines } = capturingLogger();
    const alloc = new Allocator({ backends: fakes.addresses, connect: fakes.connect, logger });
    try {
      const ranges = await alloc.fetchRanges(SEQ, 8);
      const fromA = ranges.map((r) => r.first / SEQ.blockSize).filter((t) => t % 2n === 1n);
      // The fault took hold: A was asked to advance and refused; its tickets are still its low ones.
      expect(
        lines.filter((l) => String(l.msg).startsWith('counter behind its peers could not be caught up')),
      ).toHaveLength(1);
      expect(fromA.length).toBeGreaterThan(0);
      expect(fromA.every((t) => t < 20_000n)).toBe(true);
      expect(alloc.status().map((s) => s.state)).toEqual(['up', 'up']);
      // Every ticket of A was claimed on B before it was served.
      for (const t of fromA) expect(b.claims.get(SEQ.name)?.has(t)).toBe(true);
    } finally {
      await alloc.close();
    }
  });
});
