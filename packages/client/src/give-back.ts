/**
 * Giving a client's unused IDs back on close() (POST /v1/sequences/{name}/blocks/return): the tail
 * of the block being handed out and every block buffered whole, each with the lease ticketd signed
 * it with. Bounded by a short timeout; whatever is not taken (an error, a timeout, an older ticketd
 * without leases) is simply lost: a gap, never a duplicate, and never retried for long.
 */
import { LeaseFailedError } from './errors.js';
import { askInTurn, getJson, requestInit, type TlsMaterial } from './requests.js';

/** How long close() spends giving IDs back, when the options give no time (giveBackTimeoutMs). */
export const DEFAULT_GIVE_BACK_TIMEOUT_MS = 1000;

/** IDs from..last of a leased block, not handed out. */
export interface UnusedTail {
  readonly lease: string;
  readonly from: bigint;
  readonly last: bigint;
}

/**
 * What close() reports of each leased block it gives back, through `onEvent`: `returned` (ticketd
 * took IDs first..last back, `count` of them) or `return-failed` (those `count` IDs are lost, a gap;
 * `error` says why, `codes` are the servers' problem codes). `first` and `last` are the block's own
 * ordered IDs, before an opaque sequence's permutation.
 */
export type TicketClientEvent =
  | { readonly type: 'returned'; readonly first: bigint; readonly last: bigint; readonly count: bigint }
  | {
      readonly type: 'return-failed';
      readonly first: bigint;
      readonly last: bigint;
      readonly count: bigint;
      readonly error: string;
      readonly codes: readonly string[];
    };

/** What giving back needs of the client's options. */
export interface GiveBackOptions extends TlsMaterial {
  readonly urls: readonly string[];
  readonly sequence: string;
  readonly token?: string;
  readonly giveBackTimeoutMs?: number;
  readonly onEvent?: (event: TicketClientEvent) => void;
}

/**
 * Gives the tails back, all at once, each to the URLs in turn from `start`, and reports each through
 * `onEvent`; returns how many IDs ticketd took.
 */
export async function giveBack(options: GiveBackOptions, start: number, tails: readonly UnusedTail[]): Promise<bigint> {
  const timeoutMs = options.giveBackTimeoutMs ?? DEFAULT_GIVE_BACK_TIMEOUT_MS;
  if (tails.length === 0 || timeoutMs <= 0) return 0n;
  const path = `/v1/sequences/${encodeURIComponent(options.sequence)}/blocks/return`;
  const taken = await Promise.all(
    tails.map(async (tail) => {
      const init = requestInit({ ...options, timeoutMs }, 'POST');
      const failure = `no ticketd took back IDs ${tail.from}..${tail.last} of ${options.sequence}`;
      try {
        const { value } = await askInTurn(options.urls, start, failure, (url) =>
          getJson<{ returned: string }>(
            url + path,
            {
              ...init,
              headers: { ...(init.headers as Record<string, string>), 'content-type': 'application/json' },
              body: JSON.stringify({ lease: tail.lease, from: String(tail.from) }),
            },
            (b) => typeof b.returned === 'string',
          ),
        );
        const count = BigInt(value.returned);
        report(options, { type: 'returned', first: tail.from, last: tail.last, count });
        return count;
      } catch (error) {
        report(options, {
          type: 'return-failed',
          first: tail.from,
          last: tail.last,
          count: tail.last - tail.from + 1n,
          error: error instanceof Error ? error.message : String(error),
          codes: error instanceof LeaseFailedError ? error.codes : [],
        });
        return 0n;
      }
    }),
  );
  return taken.reduce((sum, n) => sum + n, 0n);
}

/** Hands an event to onEvent; what the callback throws is not close()'s failure. */
function report(options: GiveBackOptions, event: TicketClientEvent): void {
  try {
    options.onEvent?.(event);
  } catch {
    // The caller's callback: its failure changes nothing given back.
  }
}
