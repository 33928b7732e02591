/**
 * Giving a client's unused IDs back on close() (POST /v1/sequences/{name}/blocks/return): the tail
 * of the block being handed out and every block buffered whole, each with the lease ticketd signed
 * it with. Bounded by a short timeout; whatever is not taken (an error, a timeout, an older ticketd
 * without leases) is simply lost: a gap, never a duplicate, and never retried for long.
 */
import { askInTurn, getJson, requestInit, type TlsMaterial } from './requests.js';

/** How long close() spends giving IDs back, when the options give no time (giveBackTimeoutMs). */
export const DEFAULT_GIVE_BACK_TIMEOUT_MS = 1000;

/** IDs from..last of a leased block, not handed out. */
export interface UnusedTail {
  readonly lease: string;
  readonly from: bigint;
}

/** What giving back needs of the client's options. */
export interface GiveBackOptions extends TlsMaterial {
  readonly urls: readonly string[];
  readonly sequence: string;
  readonly token?: string;
  readonly giveBackTimeoutMs?: number;
}

/** Gives the tails back, all at once, each to the URLs in turn from `start`; returns how many IDs ticketd took. */
export async function giveBack(options: GiveBackOptions, start: number, tails: readonly UnusedTail[]): Promise<bigint> {
  const timeoutMs = options.giveBackTimeoutMs ?? DEFAULT_GIVE_BACK_TIMEOUT_MS;
  if (tails.length === 0 || timeoutMs <= 0) return 0n;
  const path = `/v1/sequences/${encodeURIComponent(options.sequence)}/blocks/return`;
  const taken = await Promise.all(
    tails.map(async (tail) => {
      const init = requestInit({ ...options, timeoutMs }, 'POST');
      try {
        const { value } = await askInTurn(options.urls, start, 'no ticketd took the IDs back', (url) =>
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
        return BigInt(value.returned);
      } catch {
        return 0n;
      }
    }),
  );
  return taken.reduce((sum, n) => sum + n, 0n);
}
