import { runRound } from '../../src/allocator/refill-round.js';
import type { IdRange } from '../../src/core/blocks.js';

const block = (n: number): IdRange => ({ first: BigInt(n * 10), last: BigInt(n * 10 + 9) });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const never = () => new Promise<{ retry: boolean }>(() => undefined);

describe('runRound', () => {
  it('resolves a grace period after the first blocks; a slower lane’s blocks arrive late, none lost', async () => {
    const late: IdRange[] = [];
    const started = Date.now();
    const result = await runRound({
      lanes: [
        { slot: 'fast', count: 1 },
        { slot: 'slow', count: 1 },
      ],
      spares: [],
      run: async (slot, _count, deliver) => {
        await sleep(slot === 'fast' ? 5 : 200);
        deliver([block(slot === 'fast' ? 1 : 2)]);
        return { retry: false };
      },
      onLate: (ranges) => late.push(...ranges),
      graceMs: 20,
      hedgeMs: 1000,
    });
    expect(result.ranges).toEqual([block(1)]);
    expect(Date.now() - started).toBeLessThan(150);
    await sleep(250);
    expect(late).toEqual([block(2)]);
  });

  it('asks a spare backend when the only lane stalls past the hedge time', async () => {
    const asked: string[] = [];
    const result = await runRound({
      lanes: [{ slot: 'hung', count: 4 }],
      spares: ['spare'],
      run: async (slot, count, deliver) => {
        asked.push(`${slot}:${count}`);
        if (slot === 'hung') return never();
        deliver([block(7)]);
        return { retry: false };
      },
      onLate: () => undefined,
      graceMs: 5,
      hedgeMs: 30,
    });
    expect(asked).toEqual(['hung:4', 'spare:1']);
    expect(result.ranges).toEqual([block(7)]);
  });

  it('tries the spare when every lane ended empty, and reports retry when a lane failed', async () => {
    const result = await runRound({
      lanes: [{ slot: 'a', count: 1 }],
      spares: ['b'],
      run: async (slot) => {
        if (slot === 'a') throw new Error('connection refused');
        return { retry: false };
      },
      onLate: () => undefined,
      graceMs: 5,
      hedgeMs: 1000,
    });
    expect(result).toEqual({ ranges: [], retry: true });
  });

  it('resolves empty at once with no lanes', async () => {
    expect(
      await runRound({ lanes: [], spares: [], run: never, onLate: () => undefined, graceMs: 5, hedgeMs: 5 }),
    ).toEqual({ ranges: [], retry: false });
  });
});
