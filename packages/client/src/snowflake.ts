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
import { hostname } from 'node:os';
import { ClockMovedBackError, ClockSkewError, NoLeaseError, SnowflakeLayoutError } from './errors.js';
import { completeLayout, decompose, DEFAULT_SNOWFLAKE_EPOCH_MS, firstIdOf, type SnowflakeLayout, type SnowflakeParts } from './snowflake-layout.js';
import { leaseIsLost, LeaseRequests, type LeaseAnswer } from './worker-lease.js';

/** The clocks a generator reads; tests pass their own. */
export interface SnowflakeClock {
  /** Wall-clock Unix milliseconds (Date.now): what goes into IDs. */
  wallMs(): number;
  /** Monotonic milliseconds (performance.now): what judges the lease. */
  monoMs(): number;
}

/** What a generator reports to logs and metrics. */
export type SnowflakeEvent =
  | { readonly type: 'leased'; readonly workerId: number; readonly epoch: string; readonly expiresInMs: number; readonly highWaterMs: number }
  | { readonly type: 'renewed'; readonly workerId: number; readonly skewMs: number }
  | { readonly type: 'renew-failed'; readonly workerId: number; readonly error: string; readonly leftMs: number }
  | { readonly type: 'lease-ended'; readonly workerId: number; readonly reason: string }
  | { readonly type: 'clock-back'; readonly behindMs: number }
  | { readonly type: 'skew'; readonly skewMs: number; readonly limitMs: number }
  | { readonly type: 'released'; readonly workerId: number; readonly lastUsedMs: number };

/** Options of createSnowflake. */
export interface SnowflakeOptions {
  /** ticketd base URLs; each call fails over from one to the next. */
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
  readonly clock?: SnowflakeClock;
  readonly onEvent?: (event: SnowflakeEvent) => void;
}

/** A Snowflake generator. */
export interface Snowflake {
  /** Takes the lease (once) and resolves when IDs can be issued. */
  ready(): Promise<void>;
  /** The next ID; waits for a lease and for small clock steps back. */
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
const SYSTEM_CLOCK: SnowflakeClock = { wallMs: Date.now, monoMs: () => performance.now() };
/** Calls of next() that may reuse one clock read within a turn of the event loop. */
const FRESH_CALLS = 64;
/** How long to wait between tries to take a lease after one ended. */
const RETAKE_DELAY_MS = 1000;

/** Creates a generator; the lease is taken by ready() or the first next(). */
export function createSnowflake(options: SnowflakeOptions): Snowflake {
  if (options.urls.length === 0) throw new NoLeaseError('createSnowflake needs at least one ticketd URL');
  return new SnowflakeGenerator(options);
}

/** The lease held, as the generator judges it. */
interface Held {
  readonly workerId: number;
  readonly epoch: string;
  readonly maxSkewMs: number;
  readonly renewEveryMs: number;
  /** Monotonic time after which the lease may be over (counted from when it was asked for). */
  expiresMono: number;
  /**
   * The server's clock, read somewhere between two monotonic instants (asked, answered): every
   * timestamp is held against it. Counted from `answered` it can only be behind the server's, so
   * "ahead by more than maxSkewMs" is never missed; counted from `asked`, "behind" is never missed.
   */
  serverMs: number;
  askedMono: number;
  answeredMono: number;
}

/** This clock minus the server's, as far as one round trip can tell: 0 when the server's reading fell inside it. */
function measuredSkew(wallAsked: number, wallAnswered: number, serverMs: number): number {
  if (serverMs < wallAsked) return wallAsked - serverMs;
  if (serverMs > wallAnswered) return wallAnswered - serverMs;
  return 0;
}

class SnowflakeGenerator implements Snowflake {
  readonly #requests: LeaseRequests;
  readonly #layout: SnowflakeLayout;
  readonly #epoch: number;
  readonly #holder: string;
  readonly #maxStepBack: number;
  readonly #renewRatio: number;
  readonly #wall: () => number;
  readonly #mono: () => number;
  readonly #emit: (event: SnowflakeEvent) => void;
  #held: Held | undefined;
  #ended = 'no lease taken yet';
  #taking: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #skew: number | undefined;
  // The millisecond opened last, the next ID in it, and the end of its sequence. IDs below #end go
  // out on the hot path; every other case (a new millisecond, no lease) takes #issue.
  #ms = Number.NEGATIVE_INFINITY;
  #next = 0n;
  #end = 0n;
  // Calls of next() left that may reuse the last clock read (never more than the IDs left in the
  // open millisecond), and whether their reset at the end of this turn is queued.
  #fresh = 0;
  #turnEnds = false;

  constructor(options: SnowflakeOptions) {
    this.#requests = new LeaseRequests(options);
    this.#layout = completeLayout(options.layout);
    this.#epoch = options.epoch ?? DEFAULT_SNOWFLAKE_EPOCH_MS;
    this.#holder = options.holder ?? `${hostname()}/${process.pid}`;
    this.#maxStepBack = options.maxStepBackMs ?? DEFAULT_MAX_STEP_BACK_MS;
    this.#renewRatio = options.renewAfterRatio ?? 1 / 3;
    const clock = options.clock ?? SYSTEM_CLOCK;
    this.#wall = clock === SYSTEM_CLOCK ? Date.now : () => clock.wallMs();
    this.#mono = () => clock.monoMs();
    const onEvent = options.onEvent;
    this.#emit = onEvent === undefined ? () => undefined : (event) => onEvent(event);
  }

  get workerId(): number | undefined {
    return this.#held?.workerId;
  }

  get skewMs(): number | undefined {
    return this.#skew;
  }

  readonly nextSync = (): bigint => {
    const now = this.#wall();
    // next() may reuse its last clock read only for IDs it counted as left: this call takes one.
    this.#fresh = 0;
    if (now === this.#ms && this.#next < this.#end) return this.#next++;
    let id = this.#issue(now);
    const spinUntil = this.#mono() + this.#maxStepBack + 2;
    while (id === undefined) {
      if (this.#mono() > spinUntil) throw new ClockMovedBackError(`the clock has not passed ${new Date(this.#ms).toISOString()} (the last timestamp used) within ${this.#maxStepBack} ms`);
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

  readonly ready = async (): Promise<void> => {
    while (this.#held === undefined) {
      if (this.#closed) throw new NoLeaseError('generator is closed');
      await this.#take();
    }
  };

  readonly decompose = (id: bigint): SnowflakeParts => decompose(id, this.#layout, this.#epoch);

  readonly close = async (): Promise<void> => {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#taking?.catch(() => undefined);
    const held = this.#held;
    this.#endLease('closed');
    if (held === undefined) return;
    const lastUsedMs = Number.isFinite(this.#ms) ? this.#ms : 0;
    await this.#requests.release(held.workerId, held.epoch, lastUsedMs).then(
      () => this.#emit({ type: 'released', workerId: held.workerId, lastUsedMs }),
      // Unreleased, the lease simply runs out; its worker ID is free after the reuse delay.
      (error: unknown) => this.#emit({ type: 'lease-ended', workerId: held.workerId, reason: `release failed: ${String(error)}` }),
    );
  };

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
      if (this.#held === undefined) {
        await this.ready();
        now = this.#wall();
      }
      const id = this.#issue(now);
      if (id !== undefined) {
        this.#refreshed();
        return id;
      }
      await sleep(Math.max(1, this.#ms - now + 1));
      now = this.#wall();
    }
  }

  /** The next ID at wall time `now`, or undefined when the clock must first pass the last millisecond opened. */
  #issue(now: number): bigint | undefined {
    const held = this.#held;
    if (held === undefined) throw new NoLeaseError(`no lease of a worker ID is held (${this.#ended}); next() waits for one`);
    const mono = this.#mono();
    if (mono >= held.expiresMono) {
      this.#endLease(`lease of worker ${held.workerId} ran out unrenewed`);
      this.#retake();
      throw new NoLeaseError(`the lease of worker ${held.workerId} ran out before it was renewed; nothing more is issued on it`);
    }
    const ahead = now - held.serverMs - (mono - held.answeredMono);
    const behind = held.serverMs + (mono - held.askedMono) - now;
    const skew = ahead > 0 ? ahead : -behind;
    if (ahead > held.maxSkewMs || behind > held.maxSkewMs) {
      this.#emit({ type: 'skew', skewMs: skew, limitMs: held.maxSkewMs });
      throw new ClockSkewError(`this clock is ${Math.round(skew)} ms off the server's (limit ${held.maxSkewMs} ms, the pool's maxSkewMs): nothing is issued until it is back within it`);
    }
    if (now > this.#ms) {
      this.#ms = now;
      this.#next = firstIdOf(now, held.workerId, this.#layout, this.#epoch);
      this.#end = this.#next + (1n << BigInt(this.#layout.sequenceBits));
      return this.#next++;
    }
    // The clock is at or behind the last millisecond opened: its sequence goes on while it lasts.
    if (this.#next < this.#end) return this.#next++;
    const stepBack = this.#ms - now;
    if (stepBack > this.#maxStepBack) {
      this.#emit({ type: 'clock-back', behindMs: stepBack });
      throw new ClockMovedBackError(`the clock is ${stepBack} ms behind the last timestamp used (more than maxStepBackMs ${this.#maxStepBack}): nothing is issued until it passes ${new Date(this.#ms).toISOString()}`);
    }
    return undefined;
  }

  /** Takes a lease, single-flight. */
  #take(): Promise<void> {
    this.#taking ??= this.#takeOnce().finally(() => {
      this.#taking = undefined;
    });
    return this.#taking;
  }

  async #takeOnce(): Promise<void> {
    const asked = this.#mono();
    const wallAsked = this.#wall();
    const lease = await this.#requests.take(this.#holder);
    const answered = this.#mono();
    const skew = measuredSkew(wallAsked, this.#wall(), lease.serverTimeMs);
    this.#skew = skew;
    const refusal = this.#refusal(lease, skew);
    if (refusal !== undefined || this.#closed) {
      await this.#requests.release(lease.workerId, lease.epoch, lease.highWaterMs).catch(() => undefined);
      if (refusal !== undefined) throw refusal;
      return;
    }
    // Earlier holders used timestamps up to the high-water mark: start above it.
    const wait = lease.highWaterMs - this.#wall() + 1;
    if (wait > 0) await sleep(wait);
    this.#ms = Math.max(this.#ms, lease.highWaterMs);
    this.#end = this.#next;
    this.#held = {
      workerId: lease.workerId,
      epoch: lease.epoch,
      maxSkewMs: lease.maxSkewMs,
      renewEveryMs: Math.max(100, lease.ttlMs * this.#renewRatio),
      expiresMono: asked + lease.expiresInMs,
      serverMs: lease.serverTimeMs,
      askedMono: asked,
      answeredMono: answered,
    };
    this.#emit({ type: 'leased', workerId: lease.workerId, epoch: lease.epoch, expiresInMs: lease.expiresInMs, highWaterMs: lease.highWaterMs });
    this.#schedule(this.#held.renewEveryMs);
  }

  /** Why a lease cannot be used here: the layout cannot hold its worker ID, or this clock is off the server's. */
  #refusal(lease: LeaseAnswer, skew: number): Error | undefined {
    if (lease.workerBits > this.#layout.workerBits) return new SnowflakeLayoutError(`pool ${lease.pool} has ${lease.workerBits}-bit worker IDs; layout.workerBits is ${this.#layout.workerBits}`);
    if (Math.abs(skew) > lease.maxSkewMs) {
      this.#emit({ type: 'skew', skewMs: skew, limitMs: lease.maxSkewMs });
      return new ClockSkewError(`this clock is ${Math.round(skew)} ms off the server's (limit ${lease.maxSkewMs} ms, the pool's maxSkewMs); lease given back`);
    }
    const wait = lease.highWaterMs - this.#wall();
    if (wait > 2 * lease.maxSkewMs + this.#maxStepBack) return new ClockMovedBackError(`the worker ID's earlier holders used timestamps ${wait} ms ahead of this clock; lease given back`);
    return undefined;
  }

  #schedule(ms: number): void {
    clearTimeout(this.#timer);
    if (this.#closed) return;
    this.#timer = setTimeout(() => void this.#renew(), ms);
    this.#timer.unref?.();
  }

  async #renew(): Promise<void> {
    const held = this.#held;
    if (held === undefined || this.#closed) return;
    const asked = this.#mono();
    const wallAsked = this.#wall();
    try {
      const lease = await this.#requests.renew(held.workerId, held.epoch, this.#skew === undefined ? undefined : Math.round(this.#skew));
      if (this.#held !== held) return;
      const answered = this.#mono();
      this.#skew = measuredSkew(wallAsked, this.#wall(), lease.serverTimeMs);
      held.expiresMono = asked + lease.expiresInMs;
      held.serverMs = lease.serverTimeMs;
      held.askedMono = asked;
      held.answeredMono = answered;
      this.#emit({ type: 'renewed', workerId: held.workerId, skewMs: this.#skew });
      if (Math.abs(this.#skew) > held.maxSkewMs) this.#emit({ type: 'skew', skewMs: this.#skew, limitMs: held.maxSkewMs });
      this.#schedule(held.renewEveryMs);
    } catch (error) {
      if (this.#held !== held) return;
      if (leaseIsLost(error)) {
        this.#endLease(`ticketd answered that the lease of worker ${held.workerId} is lost`);
        this.#retake();
        return;
      }
      const leftMs = held.expiresMono - this.#mono();
      this.#emit({ type: 'renew-failed', workerId: held.workerId, error: String(error), leftMs });
      if (leftMs <= 0) {
        // Over: an idle generator learns it here rather than at its next ID.
        this.#endLease(`lease of worker ${held.workerId} ran out unrenewed`);
        this.#retake();
        return;
      }
      // Try again while the lease lasts.
      this.#schedule(Math.max(50, Math.min(1000, leftMs / 4)));
    }
  }

  /** Ends the lease held: nothing more is issued on it, not even in the millisecond open now. */
  #endLease(reason: string): void {
    const held = this.#held;
    this.#held = undefined;
    this.#ended = reason;
    this.#end = this.#next;
    this.#fresh = 0;
    clearTimeout(this.#timer);
    if (held !== undefined && !this.#closed) this.#emit({ type: 'lease-ended', workerId: held.workerId, reason });
  }

  /** Takes a new lease in the background, trying again until one is held or the generator is closed. */
  #retake(): void {
    if (this.#closed || this.#taking !== undefined) return;
    this.#take().catch(() => {
      this.#timer = setTimeout(() => this.#retake(), RETAKE_DELAY_MS);
      this.#timer.unref?.();
    });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
