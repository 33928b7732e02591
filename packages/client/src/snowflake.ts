/**
 * A Snowflake generator whose worker ID is leased from ticketd (README, "Snowflake worker IDs").
 * An ID is (milliseconds since the epoch, worker ID, sequence). Two rules keep IDs unique:
 *
 * - Only while a lease is held, judged on the monotonic clock from when the lease was asked for
 *   (so a process paused past its TTL finds its lease over when it wakes), does the generator open
 *   a new millisecond; and it opens only milliseconds above the lease's high-water mark and above
 *   every one it opened before. Earlier holders of the worker ID used none of those.
 * - Its clock must stay within the pool's maxSkewMs of the server's, estimated as the server's time
 *   at the last renewal plus the monotonic time since; ticketd's high-water marks add that bound.
 *
 * Within a millisecond already opened, the hot path is one comparison and one increment.
 */
import type { TlsMaterial } from './requests.js';
import { hostname } from 'node:os';
import { ClockMovedBackError, ClockSkewError, NoLeaseError } from './errors.js';
import { LeaseKeeper, skewText, type SnowflakeEvent } from './lease-keeper.js';

export type { SnowflakeEvent } from './lease-keeper.js';
import {
  completeLayout,
  decompose,
  DEFAULT_SNOWFLAKE_EPOCH_MS,
  firstIdOf,
  type SnowflakeLayout,
  type SnowflakeParts,
} from './snowflake-layout.js';
import { LeaseRequests } from './worker-lease.js';

/** The clocks a generator reads; tests pass their own. */
export interface SnowflakeClock {
  /** Wall-clock Unix milliseconds (Date.now): what goes into IDs. */
  wallMs(): number;
  /** Monotonic milliseconds (performance.now): what judges the lease. */
  monoMs(): number;
}

/** Options of createSnowflake. */
export interface SnowflakeOptions extends TlsMaterial {
  /** ticketd base URLs (http:// or https://); each call fails over from one to the next. */
  readonly urls: readonly string[];
  /** The worker pool (created by an admin: PUT /v1/worker-pools/{pool}). */
  readonly pool: string;
  /** A client token of the pool, when ticketd has TICKETD_CLIENT_TOKENS. */
  readonly token?: string;
  /** Milliseconds of the IDs' time zero (default 2024-01-01T00:00:00Z). */
  readonly epoch?: number;
  /** Bit widths (default 41/10/12); workerBits must hold the pool's worker IDs. */
  readonly layout?: Partial<SnowflakeLayout>;
  /** Shown to operators (`ticketd workers`); default host/pid. */
  readonly holder?: string;
  /** A clock step back up to this is waited out; a larger one stops issuing until the clock passes the last timestamp (default 50). */
  readonly maxStepBackMs?: number;
  /** Renew after this fraction of the TTL (default 1/3: two more tries before the lease ends). */
  readonly renewAfterRatio?: number;
  /** Per-request timeout in milliseconds (default 2000). */
  readonly timeoutMs?: number;
  /** How long next() and ready() wait for a lease (after a pause, a lost lease, a full pool) before NoLeaseError (default 30000). */
  readonly leaseWaitMs?: number;
  readonly clock?: SnowflakeClock;
  readonly onEvent?: (event: SnowflakeEvent) => void;
}

/** A Snowflake generator. */
export interface Snowflake {
  /** Takes the lease (once) and resolves when IDs can be issued; waits up to leaseWaitMs for one, then throws NoLeaseError. */
  ready(): Promise<void>;
  /** The next ID; waits up to leaseWaitMs for a lease (a new one after a pause past the TTL) and for small clock steps back. */
  next(): Promise<bigint>;
  /** The next ID without waiting (a small step back is spun out); throws NoLeaseError, ClockMovedBackError or ClockSkewError. */
  nextSync(): bigint;
  /** Takes an ID apart by this generator's layout and epoch. */
  decompose(id: bigint): SnowflakeParts;
  /** The worker ID held now, if any. */
  readonly workerId: number | undefined;
  /** The clock skew measured against the server at the last lease or renewal (this clock minus the server's). */
  readonly skewMs: number | undefined;
  /** Stops renewing and releases the lease with the last timestamp used. */
  close(): Promise<void>;
}

/** A step back up to this is waited out when none is given. */
export const DEFAULT_MAX_STEP_BACK_MS = 50;
/** How long next() and ready() wait for a lease when no leaseWaitMs is given. */
export const DEFAULT_LEASE_WAIT_MS = 30_000;
const SYSTEM_CLOCK: SnowflakeClock = { wallMs: Date.now, monoMs: () => performance.now() };
/** Calls of next() that may reuse one clock read within a turn of the event loop. */
const FRESH_CALLS = 64;

/** Creates a generator; the lease is taken by ready() or the first next(). */
export function createSnowflake(options: SnowflakeOptions): Snowflake {
  if (options.urls.length === 0) throw new NoLeaseError('createSnowflake needs at least one ticketd URL');
  return new SnowflakeGenerator(options);
}

class SnowflakeGenerator implements Snowflake {
  readonly #layout: SnowflakeLayout;
  readonly #epoch: number;
  readonly #maxStepBack: number;
  readonly #wall: () => number;
  readonly #mono: () => number;
  readonly #emit: (event: SnowflakeEvent) => void;
  readonly #lease: LeaseKeeper;
  readonly #pool: string;
  readonly #leaseWait: number;
  // The millisecond opened last, the next ID in it, and the end of its sequence. IDs below #end go
  // out on the hot path; every other case (a new millisecond, no lease) takes #issue.
  #ms = Number.NEGATIVE_INFINITY;
  #next = 0n;
  #end = 0n;
  /** A step back past maxStepBackMs was reported (one clock-back event per step, not per call). */
  #backReported = false;
  // Calls of next() left that may reuse the last clock read (never more than the IDs left in the
  // open millisecond), and whether their reset at the end of this turn is queued.
  #fresh = 0;
  #turnEnds = false;

  constructor(options: SnowflakeOptions) {
    this.#layout = completeLayout(options.layout);
    this.#epoch = options.epoch ?? DEFAULT_SNOWFLAKE_EPOCH_MS;
    this.#maxStepBack = options.maxStepBackMs ?? DEFAULT_MAX_STEP_BACK_MS;
    this.#pool = options.pool;
    this.#leaseWait = options.leaseWaitMs ?? DEFAULT_LEASE_WAIT_MS;
    if (!(this.#leaseWait >= 0))
      throw new RangeError(`leaseWaitMs must be 0 or more, not ${String(options.leaseWaitMs)}`);
    const clock = options.clock ?? SYSTEM_CLOCK;
    this.#wall = clock === SYSTEM_CLOCK ? Date.now : () => clock.wallMs();
    this.#mono = () => clock.monoMs();
    const onEvent = options.onEvent;
    this.#emit = onEvent === undefined ? () => undefined : (event) => onEvent(event);
    this.#lease = new LeaseKeeper({
      requests: new LeaseRequests(options),
      holder: options.holder ?? `${hostname()}/${process.pid}`,
      workerBits: this.#layout.workerBits,
      maxStepBackMs: this.#maxStepBack,
      renewAfterRatio: options.renewAfterRatio ?? 1 / 3,
      wall: this.#wall,
      mono: this.#mono,
      emit: this.#emit,
      // Above the earlier holders' last millisecond, and above every one this generator opened.
      onLeased: (highWaterMs) => {
        this.#ms = Math.max(this.#ms, highWaterMs);
        this.#end = this.#next;
      },
      // Nothing more on the lease that ended, not even in the millisecond open now.
      onEnded: () => {
        this.#end = this.#next;
        this.#fresh = 0;
      },
    });
  }

  get workerId(): number | undefined {
    return this.#lease.held?.workerId;
  }

  get skewMs(): number | undefined {
    return this.#lease.skewMs;
  }

  readonly nextSync = (): bigint => {
    const now = this.#wall();
    // next() may reuse its last clock read only for IDs it counted as left: this call takes one.
    this.#fresh = 0;
    if (now === this.#ms && this.#next < this.#end) return this.#next++;
    let id = this.#issue(now);
    const spinUntil = this.#mono() + this.#maxStepBack + 2;
    while (id === undefined) {
      if (this.#mono() > spinUntil)
        throw new ClockMovedBackError(
          `the clock has not passed ${new Date(this.#ms).toISOString()} (the last timestamp used) within ${this.#maxStepBack} ms`,
        );
      id = this.#issue(this.#wall());
    }
    return id;
  };

  readonly next = async (): Promise<bigint> => {
    // Awaited callers in a tight loop never leave the microtask queue, so the clock read last is
    // reused for up to FRESH_CALLS calls within one turn of the event loop (a macrotask resets it).
    // Those IDs stay in the millisecond already open: unique, only their time is as old as that read.
    if (this.#fresh > 0) {
      this.#fresh--;
      return this.#next++;
    }
    const now = this.#wall();
    if (now === this.#ms && this.#next < this.#end) {
      const id = this.#next++;
      this.#refreshed();
      return id;
    }
    return this.#nextSlow(now);
  };

  readonly ready = (): Promise<void> => this.#lease.waitForLease(this.#leaseWait, this.#pool);

  readonly decompose = (id: bigint): SnowflakeParts => decompose(id, this.#layout, this.#epoch);

  readonly close = (): Promise<void> => this.#lease.close(() => (Number.isFinite(this.#ms) ? this.#ms : 0));

  /**
   * The clock was just read (and its ID taken): the next FRESH_CALLS calls of next() in this turn of
   * the event loop may reuse it, as long as the open millisecond has IDs left for them.
   */
  #refreshed(): void {
    const left = this.#end - this.#next;
    this.#fresh = left < BigInt(FRESH_CALLS) ? Number(left) : FRESH_CALLS;
    if (this.#turnEnds) return;
    this.#turnEnds = true;
    setImmediate(() => {
      this.#fresh = 0;
      this.#turnEnds = false;
    });
  }

  async #nextSlow(now: number): Promise<bigint> {
    for (;;) {
      if (!this.#leaseUsable()) {
        await this.ready();
        now = this.#wall();
      }
      let id: bigint | undefined;
      try {
        id = this.#issue(now);
      } catch (error) {
        // The lease ran out between the look above and this one: wait for the next, as above.
        if (error instanceof NoLeaseError && !this.#lease.closed) continue;
        throw error;
      }
      if (id !== undefined) {
        this.#refreshed();
        return id;
      }
      await sleep(Math.max(1, this.#ms - now + 1));
      now = this.#wall();
    }
  }

  /** False when no lease is held, or the one held ran out on the monotonic clock (a pause past the TTL), which ends it. */
  #leaseUsable(): boolean {
    const held = this.#lease.held;
    if (held === undefined) return false;
    if (this.#mono() < held.expiresMono) return true;
    this.#lease.end(`lease of worker ${held.workerId} ran out unrenewed`);
    return false;
  }

  /** The next ID at wall time `now`, or undefined when the clock must first pass the last millisecond opened. */
  #issue(now: number): bigint | undefined {
    const held = this.#lease.held;
    if (held === undefined)
      throw new NoLeaseError(`no lease of a worker ID is held (${this.#lease.ended}); next() waits for one`);
    const mono = this.#mono();
    if (mono >= held.expiresMono) {
      this.#lease.end(`lease of worker ${held.workerId} ran out unrenewed`);
      this.#lease.retake();
      throw new NoLeaseError(
        `the lease of worker ${held.workerId} ran out before it was renewed; nothing more is issued on it`,
      );
    }
    // The server's clock now lies in [serverMs + (mono − answered), serverMs + (mono − asked)].
    // Ahead is judged by the most it may be (a holder ahead of the server could mint past the
    // high-water mark the next holder starts from); behind by the least it surely is, since minting
    // above the high-water mark already guards that side, and a slow answer (a peer that hangs
    // under the claim) must not read as a clock behind.
    const sinceAnswer = mono - held.answeredMono;
    const ahead = now - held.serverMs - sinceAnswer;
    const behind = held.serverMs + sinceAnswer - now;
    if (ahead > held.maxSkewMs || behind > held.maxSkewMs) {
      const skew = ahead > held.maxSkewMs ? ahead : -behind;
      this.#emit({ type: 'skew', skewMs: skew, limitMs: held.maxSkewMs });
      throw new ClockSkewError(
        `this clock is ${skewText(skew)} the server's (limit ${held.maxSkewMs} ms, the pool's maxSkewMs): nothing is issued until it is back within it`,
      );
    }
    if (now > this.#ms) {
      this.#ms = now;
      this.#backReported = false;
      this.#next = firstIdOf(now, held.workerId, this.#layout, this.#epoch);
      this.#end = this.#next + (1n << BigInt(this.#layout.sequenceBits));
      return this.#next++;
    }
    // A step back past maxStepBackMs stops it at once, as documented: going on with the open
    // millisecond's sequence would freeze the time in its IDs without a word.
    const stepBack = this.#ms - now;
    if (stepBack > this.#maxStepBack) {
      if (!this.#backReported) this.#emit({ type: 'clock-back', behindMs: stepBack });
      this.#backReported = true;
      throw new ClockMovedBackError(
        `the clock is ${stepBack} ms behind the last timestamp used (more than maxStepBackMs ${this.#maxStepBack}): nothing is issued until it passes ${new Date(this.#ms).toISOString()}`,
      );
    }
    // At or a little behind the last millisecond opened: its sequence goes on while it lasts.
    if (this.#next < this.#end) return this.#next++;
    return undefined;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
