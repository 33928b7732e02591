/**
 * What issues a sequence's IDs: one issuer per sequence, chosen once from its kind when the sequence
 * is loaded (served-sequences.ts), as its codec is. The fast path and the Express routes both ask it,
 * through TicketService.issue, and nothing else branches on the kind to issue.
 */
import type { IdRange } from '../core/blocks.js';
import type { Caller } from '../core/caller.js';
import { BadRequestError, StrictNoBlocksError } from '../core/errors.js';
import type { RangeCache } from '../cache/range-cache.js';
import type { IdCodec } from './id-codec.js';
import type { IssuedIds } from './opaque-ids.js';
import type { StrictSequence } from './strict-sequence.js';

/** A sequence's issuer. */
export interface Issuer {
  /** `count` IDs: at once when memory holds them, otherwise a promise of them (the miss is tried once). */
  issue(count: number, caller: Caller): IssuedIds | Promise<IssuedIds>;
  /** One whole block (a fresh ticket's IDs) for a client that hands them out itself. */
  leaseBlock(): Promise<IdRange>;
}

/** Ordered and opaque sequences: IDs from the cache, in the form the sequence's codec gives them. */
export function cachedIssuer(cache: RangeCache, codec: IdCodec, fetchBlock: () => Promise<IdRange>): Issuer {
  const wait = async (count: number): Promise<IssuedIds> => codec.encode(await cache.afterMiss(count));
  return {
    issue: (count) => codec.tryTake(count) ?? wait(count),
    leaseBlock: fetchBlock,
  };
}

/** A strict sequence this process leads or follows: IDs from the leader's bound, in real-time order. */
export function strictIssuer(name: string, strict: StrictSequence): Issuer {
  const wait = async (count: number, caller: Caller): Promise<IssuedIds> => [await strict.take(count, caller)];
  return {
    issue: (count, caller) => {
      const range = strict.tryTake(count);
      return range === undefined ? wait(count, caller) : [range];
    },
    leaseBlock: () => Promise.reject(noBlocks(name)),
  };
}

/** A strict sequence where this process cannot lead or follow (the CLI): it issues nothing. */
export function refusingStrictIssuer(name: string): Issuer {
  return {
    issue: () =>
      Promise.reject(
        new BadRequestError(
          `sequence ${name} is strict: only a serving ticketd (which leads or follows through HTTP) issues its IDs`,
        ),
      ),
    leaseBlock: () => Promise.reject(noBlocks(name)),
  };
}

function noBlocks(name: string): StrictNoBlocksError {
  return new StrictNoBlocksError(
    `sequence ${name} is strict: a block served by its client would leave real-time order; ask POST /v1/sequences/${name}/ids or GET …/next`,
  );
}
