/**
 * The client SDK: leases whole blocks from ticketd (`POST /v1/sequences/{name}/blocks`) and hands
 * their IDs out in-process. A block is leased to one client and used once, so IDs never repeat
 * within or across processes; a crash loses the rest of the block, which only leaves a gap.
 *
 * A strict sequence has no blocks (409 TICKETD_STRICT_NO_BLOCKS): its IDs come from ticketd each
 * time (strict-ids.ts), and nextSync() throws.
 */
import type { TlsMaterial } from './requests.js';
import { LeaseFailedError, NoBufferedIdsError } from './errors.js';
import { fetchIdCodec, type IdCodec, type OpaqueCodec } from './id-codec.js';
import type { IdPermutation } from './id-permutation.js';
import { askInTurn, getJson, requestInit, type Attempt } from './requests.js';
import { STRICT_NO_BLOCKS, StrictIds } from './strict-ids.js';
import { giveBack, type TicketClientEvent, type UnusedTail } from './give-back.js';

/** Options of a client. */
export interface TicketClientOptions extends TlsMaterial {
  /** ticketd base URLs (http:// or https://); a lease fails over from one to the next. */
  readonly urls: readonly string[];
  readonly sequence: string;
  /** Sent as a bearer token, for deployments that put ticketd behind an authenticating proxy. */
  readonly token?: string;
  /** Lease the next block when fewer than this fraction of the current one is left (default 0.5). */
  readonly prefetchBelowRatio?: number;
  /** Per-request timeout in milliseconds (default 2000; 5000 for a strict sequence, above a leader change). */
  readonly timeoutMs?: number;
  /**
   * For an opaque sequence: hand out its ordered IDs instead (to store, B-tree friendly) and show
   * `encode(id)`. Default false: the IDs handed out are the opaque ones, as ticketd serves them.
   */
  readonly ordered?: boolean;
  /**
   * How long close() spends giving unused leased IDs back (default 1000 ms; 0: not at all). Only
   * blocks ticketd leased with a `lease` (sequences that take IDs back) are given back.
   */
  readonly giveBackTimeoutMs?: number;
  /** Told what close() gave back and what it could not, one event per leased block (TicketClientEvent). */
  readonly onEvent?: (event: TicketClientEvent) => void;
}

/** A client of one sequence. */
export interface TicketClient {
  /** The next ID; waits for a lease only when no block is buffered (for a strict sequence: asks ticketd each time). */
  next(): Promise<bigint>;
  /** The next ID without waiting; throws NoBufferedIdsError when no block is buffered, StrictSequenceError for a strict sequence. */
  nextSync(): bigint;
  /** `count` IDs, in the order handed out. */
  nextBatch(count: number): Promise<bigint[]>;
  /** The sequence's codec; for an opaque sequence it fetches the key (needs the sequence's own client token). */
  codec(): Promise<IdCodec>;
  /**
   * Stops prefetching and gives unused leased IDs back where the sequence takes them (within
   * giveBackTimeoutMs); others, and any ticketd did not take, are given up (a gap).
   */
  close(): Promise<void>;
}

interface Block {
  readonly first: bigint;
  readonly last: bigint;
  /** From this ID on, the next block is leased in the background. */
  readonly prefetchAt: bigint;
  /** What gives its unused IDs back, when the sequence takes IDs back. */
  readonly lease: string | undefined;
}

/** Most IDs next() counts down at once (a number, not a BigInt, on its hot path). */
const QUICK_MAX = 1n << 30n;
/** Most blocks a client leases ahead of use. */
export const MAX_BLOCKS_AHEAD = 32;
/** Opaque IDs encoded in one pass: one pass costs about as much for one ID as for hundreds. */
export const ENCODE_CHUNK = 2048;

/** Encodes an opaque sequence's ordered blocks a chunk at a time; fetched once, with the first opaque block. */
interface Encoder {
  readonly permutation: IdPermutation;
  readonly out: BigUint64Array;
}

/** Creates a client; nothing is leased until the first ID is asked for. */
export function createTicketClient(options: TicketClientOptions): TicketClient {
  if (options.urls.length === 0) throw new LeaseFailedError('createTicketClient needs at least one ticketd URL');
  return new BlockClient(options);
}

/**
 * A client of one sequence. Its state is its own: the buffered blocks, the leases in flight, and
 * the block being handed out. The public methods are bound, so they may be passed around alone.
 */
class BlockClient implements TicketClient {
  readonly #options: TicketClientOptions;
  readonly #prefetchRatio: number;
  readonly #blocks: Block[] = [];
  /** The URL that answered last: leases start there. */
  #preferred = 0;
  #closed = false;
  #encoder: Encoder | undefined;
  #codec: Promise<IdCodec> | undefined;
  // Leases in flight, and how many blocks to keep ahead: doubled whenever next() had to wait, so a
  // fast consumer ends up with enough blocks buffered to cover a lease's round trip.
  #inFlight = 0;
  #ahead = 1;
  #waiter: Promise<void> | undefined;
  // The block being handed out. IDs below #fastEnd go out on the hot path: one comparison and one
  // increment. The prefetch point and the change of block take the slow path.
  #cur = 0n;
  #fastEnd = 0n;
  #last = -1n;
  // IDs next() may take below #fastEnd counting a number down, not comparing BigInts (0: look again).
  #quick = 0;
  // Opaque IDs encoded from the block, handed out from #pos to #end before the cursor moves on.
  #pos = 0;
  #end = 0;
  // Set once ticketd answered that the sequence is strict: every ID is asked for.
  #strict: StrictIds | undefined;
  // The lease of the block being handed out, and blocks whose lease came back after close().
  #curLease: string | undefined;
  readonly #late: UnusedTail[] = [];

  constructor(options: TicketClientOptions) {
    this.#options = options;
    this.#prefetchRatio = options.prefetchBelowRatio ?? 0.5;
  }

  readonly nextSync = (): bigint => {
    // next() counts the IDs it may take without a BigInt comparison: this call takes one of them.
    this.#quick = 0;
    const encoder = this.#encoder;
    if (encoder === undefined)
      return this.#cur < this.#fastEnd
        ? this.#cur++
        : this.#strict === undefined
          ? this.#takeSlow()
          : this.#strict.refuseSync();
    return this.#pos < this.#end ? encoder.out[this.#pos++]! : this.#encodeSlow(encoder);
  };

  readonly next = async (): Promise<bigint> => {
    // The hot path of nextSync() first: the rest (no block buffered, an opaque sequence) is slower anyway.
    if (this.#quick > 0) {
      this.#quick--;
      return this.#cur++;
    }
    if (this.#encoder === undefined && this.#cur < this.#fastEnd) {
      const left = this.#fastEnd - this.#cur;
      this.#quick = (left < QUICK_MAX ? Number(left) : Number(QUICK_MAX)) - 1;
      return this.#cur++;
    }
    return this.#nextSlow();
  };

  #isClosed(): boolean {
    return this.#closed;
  }

  async #nextSlow(): Promise<bigint> {
    if (this.#strict !== undefined) return this.#strict.next();
    if (!this.#buffered()) {
      if (this.#closed) throw new LeaseFailedError('client is closed');
      if (this.#inFlight > 0) this.#ahead = Math.min(MAX_BLOCKS_AHEAD, this.#ahead * 2);
      while (this.#blocks.length === 0) {
        // close() may have run during the await below: read the field afresh.
        if (this.#isClosed()) throw new LeaseFailedError('client is closed');
        try {
          await (this.#inFlight > 0 ? this.#waiter : this.#refill());
        } catch (error) {
          if (!this.#becameStrict(error)) throw error;
          return this.#strict!.next();
        }
      }
    }
    return this.nextSync();
  }

  /** Whether a lease's failure says the sequence is strict; then every ID is asked for from here on. */
  #becameStrict(error: unknown): boolean {
    if (!(error instanceof LeaseFailedError) || !error.codes.includes(STRICT_NO_BLOCKS)) return false;
    this.#strict ??= new StrictIds(this.#options);
    return true;
  }

  readonly nextBatch = async (count: number): Promise<bigint[]> => {
    if (this.#strict !== undefined) return this.#strict.batch(count);
    const ids: bigint[] = [];
    for (let i = 0; i < count; i++) ids.push(this.#buffered() ? this.nextSync() : await this.next());
    return ids;
  };

  readonly codec = (): Promise<IdCodec> => {
    this.#codec ??= fetchIdCodec(this.#options).catch((error: unknown) => {
      this.#codec = undefined;
      throw error;
    });
    return this.#codec;
  };

  readonly close = async (): Promise<void> => {
    this.#closed = true;
    // Read before anything is cleared: nothing is handed out from here on.
    const unused = this.#unused();
    this.#strict?.close();
    this.#quick = 0;
    this.#blocks.length = 0;
    this.#cur = 0n;
    this.#fastEnd = 0n;
    this.#last = -1n;
    this.#pos = 0;
    this.#end = 0;
    this.#curLease = undefined;
    await this.#waiter?.catch(() => undefined);
    await giveBack(this.#options, this.#preferred, [...unused, ...this.#late.splice(0)]);
  };

  /** The unhanded tail of the current block and every buffered block, where they have a lease. */
  #unused(): UnusedTail[] {
    const tails: UnusedTail[] = [];
    // An opaque block's chunk is encoded ahead: its IDs from #pos on were not handed out.
    const next = this.#encoder === undefined ? this.#cur : this.#cur - BigInt(this.#end - this.#pos);
    if (this.#curLease !== undefined && next <= this.#last)
      tails.push({ lease: this.#curLease, from: next, last: this.#last });
    for (const b of this.#blocks)
      if (b.lease !== undefined) tails.push({ lease: b.lease, from: b.first, last: b.last });
    return tails;
  }

  #buffered(): boolean {
    return this.#pos < this.#end || this.#cur <= this.#last || this.#blocks.length > 0;
  }

  async #loadEncoder(): Promise<void> {
    if (this.#encoder !== undefined) return;
    const found = await this.codec();
    // The permutation behind the codec, shared: one key fetch per client.
    if (found.ids === 'opaque')
      this.#encoder = { permutation: (found as OpaqueCodec).permutation, out: new BigUint64Array(ENCODE_CHUNK) };
  }

  /**
   * Why a block answer's `ids` cannot be trusted: a mode this version does not know, or (from a
   * server too old to send it, or one that misreads the sequence) not opaque for a sequence known to be.
   */
  #misreadMode(ids: string | undefined): string | undefined {
    if (ids !== undefined && ids !== 'ordered' && ids !== 'opaque')
      return `block answer has ids ${JSON.stringify(ids)}, unknown to this version; upgrade ticketd-client`;
    if (this.#encoder !== undefined && ids !== 'opaque')
      return `sequence ${this.#options.sequence} is opaque, but this ticketd leased it as ${ids ?? 'a sequence without ids'}: upgrade that ticketd`;
    return undefined;
  }

  async #lease(): Promise<Block> {
    type Leased = { first: string; last: string; ids?: string; lease?: string };
    const { urls, sequence } = this.#options;
    // Leases run concurrently: each walks the URLs from where it started, once each.
    const { value: body, index } = await askInTurn(
      urls,
      this.#preferred,
      `no ticketd leased a block of ${sequence}`,
      async (url): Promise<Attempt<Leased>> => {
        const leased = await getJson<Leased>(
          `${url}/v1/sequences/${encodeURIComponent(sequence)}/blocks`,
          requestInit(this.#options, 'POST'),
          (b) => b.first !== undefined && b.last !== undefined,
        );
        if (!leased.ok) return leased;
        const misread = this.#misreadMode(leased.value.ids);
        if (misread !== undefined) return { ok: false, error: misread, final: false };
        // The key comes with the first opaque block; not getting it counts against this URL.
        if (leased.value.ids === 'opaque' && this.#options.ordered !== true) await this.#loadEncoder();
        return leased;
      },
    );
    // Stick with a URL that answers; move on from one that did not.
    this.#preferred = index;
    const first = BigInt(body.first);
    const last = BigInt(body.last);
    const keep = ((last - first + 1n) * BigInt(Math.round(this.#prefetchRatio * 1000))) / 1000n;
    return { first, last, prefetchAt: last - keep, lease: typeof body.lease === 'string' ? body.lease : undefined };
  }

  #refill(): Promise<void> {
    this.#inFlight++;
    const leased = this.#lease()
      .then((block) => {
        if (!this.#closed) this.#blocks.push(block);
        else if (block.lease !== undefined)
          this.#late.push({ lease: block.lease, from: block.first, last: block.last });
      })
      .finally(() => {
        this.#inFlight--;
      });
    this.#waiter = leased;
    return leased;
  }

  #topUp(): void {
    while (!this.#closed && this.#blocks.length + this.#inFlight < this.#ahead) this.#refill().catch(() => undefined);
  }

  /** Moves to the next block when this one is used up; throws when none is buffered. */
  #advance(): void {
    const block = this.#blocks.shift();
    if (block === undefined) throw new NoBufferedIdsError(`no block of ${this.#options.sequence} is buffered yet`);
    this.#cur = block.first;
    this.#last = block.last;
    this.#fastEnd = block.prefetchAt;
    this.#curLease = block.lease;
  }

  #takeSlow(): bigint {
    if (this.#cur > this.#last) {
      this.#advance();
      if (this.#cur < this.#fastEnd) return this.#cur++;
    }
    // At the prefetch point: lease ahead while this block still has a share left, so next() rarely
    // waits; the rest of the block then goes out on the hot path.
    this.#topUp();
    this.#fastEnd = this.#last + 1n;
    return this.#cur++;
  }

  /** Encodes the next chunk of the block (up to the prefetch point) and returns its first ID. */
  #encodeSlow(enc: Encoder): bigint {
    if (this.#cur > this.#last) this.#advance();
    if (this.#cur >= this.#fastEnd) {
      this.#topUp();
      this.#fastEnd = this.#last + 1n;
    }
    const left = this.#fastEnd - this.#cur;
    const n = left < BigInt(ENCODE_CHUNK) ? Number(left) : ENCODE_CHUNK;
    enc.permutation.encodeRun(this.#cur, n, enc.out, 0);
    this.#cur += BigInt(n);
    this.#pos = 1;
    this.#end = n;
    return enc.out[0]!;
  }
}
