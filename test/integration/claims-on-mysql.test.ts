/** The claim statements on a real server: the unique key, the floor, pruning and the state read back. */
import { Backend } from '../../src/backend/mysql/backend.js';
import { DEFAULT_BACKEND_OPTIONS } from '../../src/backend/backend-options.js';
import { loadConfig } from '../../src/config/load-config.js';
import { floorUnder } from '../../src/core/claims.js';
import { TicketClaimedBeforeError } from '../../src/core/errors.js';
import { describeEachEngine } from '../support/engines.js';
import { startPrivatePair } from '../support/ticketd.js';

const odd = { increment: 2n, offset: 1n };
const range = (from: bigint, count: number): bigint[] => Array.from({ length: count }, (_, i) => from + 2n * BigInt(i));

describeEachEngine('claims on a real server', (engine) => {
  let peer: Backend;
  let pair: Awaited<ReturnType<typeof startPrivatePair>>;
  const sequence = `claims_${Date.now() % 100_000}`;

  beforeAll(async () => {
    pair = await startPrivatePair(engine.binary);
    const [, b] = loadConfig({ backends: pair.backendsUrl }).backends;
    peer = new Backend(b!, () => undefined, DEFAULT_BACKEND_OPTIONS);
  }, 120_000);
  afterAll(async () => {
    await peer?.close();
    await pair?.dispose();
  });

  it('takes a chunk once, refuses it again, prunes to a floor and refuses what lies below it', async () => {
    const claim = (tickets: bigint[]) => peer.claimTickets({ sequence, stripe: odd, tickets, source: 'test' });
    await claim(range(1n, 25));
    await claim(range(51n, 25));
    // One ticket of the chunk claimed before refuses the whole chunk, and stores none of it.
    const again = await claim([101n, 103n, 49n]).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(TicketClaimedBeforeError);
    expect((again as TicketClaimedBeforeError).reason).toBe('duplicate');
    await claim([101n, 103n]);
    expect(await peer.readClaims(sequence)).toEqual([{ increment: 2n, residue: 1n, highest: 103n, floor: undefined }]);

    // Keep the newest 10 of 52: the floor is the 11th newest, and claims at or below it are gone.
    const floor = await peer.pruneClaims(sequence, odd, 10);
    expect(floor).toBe(83n);
    expect(await peer.readClaims(sequence)).toEqual([{ increment: 2n, residue: 1n, highest: 103n, floor: 83n }]);
    // A ticket whose claim was pruned meets the floor (returned with the claim, judged by the
    // guard); one above it still meets its claim.
    expect(floorUnder([5n], await claim([5n]), odd)).toBe(83n);
    expect(floorUnder([105n], await claim([105n]), odd)).toBeUndefined();
    const kept = await claim([85n]).catch((e: unknown) => e);
    expect((kept as TicketClaimedBeforeError).reason).toBe('duplicate');
    // Another class is not held to this floor; nothing to prune leaves the floor alone.
    expect(
      floorUnder(
        [6n],
        await peer.claimTickets({ sequence, stripe: { increment: 2n, offset: 2n }, tickets: [6n], source: 'test' }),
        { increment: 2n, offset: 2n },
      ),
    ).toBeUndefined();
    expect(await peer.pruneClaims(sequence, odd, 1000)).toBeUndefined();
  });
});
