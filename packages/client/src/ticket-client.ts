/**
 * The client SDK: leases whole blocks from ticketd (`POST /v1/sequences/{name}/blocks`) and hands
 * their IDs out in-process. A block is leased to one client and used once, so IDs never repeat
 * within or across processes; a crash loses the rest of the block, which only leaves a gap.
 */
import { LeaseFailedError, NoBufferedIdsError } from './errors.js';

/** Options of a client. */
export interface TicketClientOptions {
  /** ticketd base URLs; a lease fails over from one to the next. */
  readonly urls: readonly string[];
  readonly sequence: string;
  /** Sent as a bearer token, for deployments that put ticketd behind an authenticating proxy. */
  readonly token?: string;
  /** Lease the next block when fewer than this fraction of the current one is left (default 0.5). */
  readonly prefetchBelowRatio?: number;
  /** Per-request timeout in milliseconds (default 2000). */
  readonly timeoutMs?: number;
}

/** A client of one sequence. */
export interface TicketClient {
  /** The next ID; waits for a lease only when no block is buffered. */
  next(): Promise<bigint>;
  /** The next ID without waiting; throws NoBufferedIdsError when no block is buffered. */
  nextSync(): bigint;
  /** `count` IDs, in order. */
  nextBatch(count: number): Promise<bigint[]>;
  /** Stops prefetching; IDs already leased are given up (a gap). */
  close(): Promise<void>;
}

interface Block {
  readonly first: bigint;
  readonly last: bigint;
  /** From this ID on, the next block is leased in the background. */
  readonly prefetchAt: bigint;
}

/** Most blocks a client leases ahead of use. */
export const MAX_BLOCKS_AHEAD = 32;

/** Creates a client; nothing is leased until the first ID is asked for. */
export function createTicketClient(options: TicketClientOptions): TicketClient {
  if (options.urls.length === 0) throw new LeaseFailedError('createTicketClient needs at least one ticketd URL');
  const prefetchRatio = options.prefetchBelowRatio ?? 0.5;
  const timeoutMs = options.timeoutMs ?? 2000;
  const blocks: Block[] = [];
  let preferred = 0;
  let closed = false;

  const lease = async (): Promise<Block> => {
    const errors: string[] = [];
    // Leases run concurrently: each walks the URLs from where it started, once each.
    const start = preferred;
    for (let attempt = 0; attempt < options.urls.length; attempt++) {
      const index = (start + attempt) % options.urls.length;
      const url = options.urls[index]!;
      try {
        const res = await fetch(`${url}/v1/sequences/${encodeURIComponent(options.sequence)}/blocks`, {
          method: 'POST',
          headers: options.token === undefined ? {} : { authorization: `Bearer ${options.token}` },
          signal: AbortSignal.timeout(timeoutMs),
        });
        const body = (await res.json()) as { first?: string; last?: string; detail?: string };
        if (res.status !== 200 || body.first === undefined || body.last === undefined) {
          errors.push(`${url}: ${res.status} ${body.detail ?? ''}`.trim());
          // A 4xx (unknown sequence, bad name, exhausted) is the same everywhere: do not fail over.
          if (res.status < 500) break;
          continue;
        }
        // Stick with a URL that answers; move on from one that did not.
        preferred = index;
        const first = BigInt(body.first);
        const last = BigInt(body.last);
        const keep = ((last - first + 1n) * BigInt(Math.round(prefetchRatio * 1000))) / 1000n;
        return { first, last, prefetchAt: last - keep };
      } catch (error) {
        errors.push(`${url}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    throw new LeaseFailedError(`no ticketd leased a block of ${options.sequence}: ${errors.join('; ')}`);
  };

  // Leases in flight, and how many blocks to keep ahead: doubled whenever next() had to wait, so a
  // fast consumer ends up with enough blocks buffered to cover a lease's round trip.
  let inFlight = 0;
  let ahead = 1;
  let waiter: Promise<void> | undefined;

  const refill = (): Promise<void> => {
    inFlight++;
    const leased = lease()
      .then((block) => {
        if (!closed) blocks.push(block);
      })
      .finally(() => {
        inFlight--;
      });
    waiter = leased;
    return leased;
  };

  const topUp = (): void => {
    while (!closed && blocks.length + inFlight < ahead) refill().catch(() => undefined);
  };

  // The block being handed out. IDs below fastEnd go out on the hot path: one comparison and one
  // increment of a closure variable. The prefetch point and the change of block take the slow path.
  let cur = 0n;
  let fastEnd = 0n;
  let last = -1n;

  const takeSlow = (): bigint => {
    if (cur > last) {
      const block = blocks.shift();
      if (block === undefined) throw new NoBufferedIdsError(`no block of ${options.sequence} is buffered yet`);
      cur = block.first;
      last = block.last;
      fastEnd = block.prefetchAt;
      if (cur < fastEnd) return cur++;
    }
    // At the prefetch point: lease ahead while this block still has a share left, so next() rarely
    // waits; the rest of the block then goes out on the hot path.
    topUp();
    fastEnd = last + 1n;
    return cur++;
  };

  const nextSync = (): bigint => (cur < fastEnd ? cur++ : takeSlow());

  const next = async (): Promise<bigint> => {
    if (cur < fastEnd) return cur++;
    if (cur > last && blocks.length === 0) {
      if (closed) throw new LeaseFailedError('client is closed');
      if (inFlight > 0) ahead = Math.min(MAX_BLOCKS_AHEAD, ahead * 2);
      while (blocks.length === 0) {
        if (closed) throw new LeaseFailedError('client is closed');
        await (inFlight > 0 ? waiter : refill());
      }
      // Another caller woken by the same lease may have started the block already.
      if (cur < fastEnd) return cur++;
    }
    return takeSlow();
  };

  return {
    next,
    nextSync,
    nextBatch: async (count) => {
      const ids: bigint[] = [];
      for (let i = 0; i < count; i++) ids.push(cur <= last || blocks.length > 0 ? nextSync() : await next());
      return ids;
    },
    close: async () => {
      closed = true;
      blocks.length = 0;
      cur = 0n;
      fastEnd = 0n;
      last = -1n;
      await waiter?.catch(() => undefined);
    },
  };
}
