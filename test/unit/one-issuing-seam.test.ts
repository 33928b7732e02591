/**
 * The issuer of an ordered sequence (src/service/issuer.ts) over a real RangeCache: IDs from memory
 * come back at once (no promise), a miss is tried once and then waits for one refill, every ID is
 * handed out once; a strict sequence without a leader's context refuses, and gives no blocks.
 */
import { RangeCache } from '../../src/cache/range-cache.js';
import type { IdRange } from '../../src/core/blocks.js';
import { ANONYMOUS_CALLER } from '../../src/core/caller.js';
import { parseSequenceSettings } from '../../src/core/sequence.js';
import { codecFor } from '../../src/service/id-codec.js';
import { cachedIssuer, refusingStrictIssuer } from '../../src/service/issuer.js';
import type { IssuedIds } from '../../src/service/opaque-ids.js';

function idsOf(issued: IssuedIds): bigint[] {
  const out: bigint[] = [];
  for (const r of issued as readonly IdRange[]) for (let id = r.first; id <= r.last; id++) out.push(id);
  return out;
}

describe('one issuing seam', () => {
  it('answers from memory at once, tries a miss once, and hands every ID out once', async () => {
    let ticket = 0n;
    const refills: number[] = [];
    const cache = new RangeCache({
      sequence: 'seam',
      blockSize: 10n,
      refill: (tickets) => {
        refills.push(tickets);
        return Promise.resolve(
          Array.from({ length: tickets }, () => {
            ticket++;
            return { first: ticket * 10n, last: ticket * 10n + 9n };
          }),
        );
      },
      clock: () => 0,
      onBackgroundError: () => undefined,
    });
    let tries = 0;
    const codec = codecFor(parseSequenceSettings('seam', { blockSize: 10 }), (n) => {
      tries++;
      return cache.tryTake(n);
    });
    const issuer = cachedIssuer(cache, codec, () => Promise.reject(new Error('no blocks here')));

    const first = issuer.issue(3, ANONYMOUS_CALLER);
    expect(first).toBeInstanceOf(Promise);
    // The miss was tried once and went straight to one refill; the wait then took from the cache itself.
    expect(tries).toBe(1);
    expect(refills).toEqual([1]);
    const seen = idsOf(await first);
    expect(tries).toBe(1);

    const cached = issuer.issue(2, ANONYMOUS_CALLER);
    expect(cached).not.toBeInstanceOf(Promise);
    seen.push(...idsOf(cached as IssuedIds));
    for (let i = 0; i < 20; i++) seen.push(...idsOf(await issuer.issue(4, ANONYMOUS_CALLER)));
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toHaveLength(3 + 2 + 80);
  });

  it('a strict sequence without a leader context refuses IDs and blocks', async () => {
    const issuer = refusingStrictIssuer('ledger');
    await expect(issuer.issue(1, ANONYMOUS_CALLER)).rejects.toMatchObject({ code: 'TICKETD_BAD_REQUEST' });
    await expect(issuer.leaseBlock()).rejects.toMatchObject({ code: 'TICKETD_STRICT_NO_BLOCKS' });
  });
});
