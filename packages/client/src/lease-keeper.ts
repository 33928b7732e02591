/**
 * The worker-ID lease of a Snowflake generator: taking it, renewing it every third of its TTL,
 * judging it on the monotonic clock, measuring the clock's skew against the server's, and taking a
 * new one by itself when it ends. The generator (snowflake.ts) only asks what is held.
 */
import { ClockMovedBackError, ClockSkewError, LeaseFailedError, NoLeaseError, SnowflakeLayoutError } from './errors.js';
import { leaseIsLost, type LeaseAnswer, type LeaseRequests } from './worker-lease.js';

/** What a generator reports to logs and metrics. */
export type SnowflakeEvent =
  | {
      readonly type: 'leased';
      readonly workerId: number;
      readonly epoch: string;
      readonly expiresInMs: number;
      readonly highWaterMs: number;
    }
  | { readonly type: 'renewed'; readonly workerId: number; readonly skewMs: number }
  | { readonly type: 'renew-failed'; readonly workerId: number; readonly error: string; readonly leftMs: number }
  | { readonly type: 'lease-ended'; readonly workerId: number; readonly reason: string }
  | { readonly type: 'take-failed'; readonly error: string; readonly codes: readonly string[] }
  | { readonly type: 'clock-back'; readonly behindMs: number }
  | { readonly type: 'skew'; readonly skewMs: number; readonly limitMs: number }
  | { readonly type: 'released'; readonly workerId: number; readonly lastUsedMs: number };

/** How long to wait between tries to take a lease after one ended. */
const RETAKE_DELAY_MS = 1000;

/** The lease held, as the generator judges it. */
export interface Held {
  readonly workerId: number;
  readonly epoch: string;
  readonly maxSkewMs: number;
  readonly renewEveryMs: number;
  /** Monotonic time after which the lease may be over (counted from when it was asked for). */
  expiresMono: number;
  /**
   * The server's clock as of its answer, which came between two monotonic instants (asked,
   * answered): every timestamp is held against it. Counted from `answered` it can only be behind the
   * server's, so "ahead by more than maxSkewMs" is never missed.
   */
  serverMs: number;
  answeredMono: number;
}

/** This clock minus the server's, as far as one round trip can tell: 0 when the server's reading fell inside it. */
function measuredSkew(wallAsked: number, wallAnswered: number, serverMs: number): number {
  if (serverMs < wallAsked) return wallAsked - serverMs;
  if (serverMs > wallAnswered) return wallAnswered - serverMs;
  return 0;
}

/** A measured skew in words: "120 ms ahead of" or "40 ms behind". */
export function skewText(skewMs: number): string {
  return `${Math.round(Math.abs(skewMs))} ms ${skewMs > 0 ? 'ahead of' : 'behind'}`;
}

/** What a keeper needs. */
export interface LeaseKeeperOptions {
  readonly requests: LeaseRequests;
  readonly holder: string;
  /** The layout's worker-ID width: a pool wider than it is refused. */
  readonly workerBits: number;
  readonly maxStepBackMs: number;
  readonly renewAfterRatio: number;
  readonly wall: () => number;
  readonly mono: () => number;
  readonly emit: (event: SnowflakeEvent) => void;
  /** A lease is about to be held: IDs from now on lie above this millisecond. */
  readonly onLeased: (highWaterMs: number) => void;
  /** The lease ended: nothing more may be issued on it. */
  readonly onEnded: () => void;
}

/** The lease of one generator. Its state is its own; the generator reads `held`. */
export class LeaseKeeper {
  readonly #requests: LeaseRequests;
  readonly #holder: string;
  readonly #workerBits: number;
  readonly #maxStepBack: number;
  readonly #renewRatio: number;
  readonly #wall: () => number;
  readonly #mono: () => number;
  readonly #emit: (event: SnowflakeEvent) => void;
  readonly #onLeased: (highWaterMs: number) => void;
  readonly #onEnded: () => void;
  #held: Held | undefined;
  #ended = 'no lease taken yet';
  #taking: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #skew: number | undefined;

  constructor(options: LeaseKeeperOptions) {
    this.#requests = options.requests;
    this.#holder = options.holder;
    this.#workerBits = options.workerBits;
    this.#maxStepBack = options.maxStepBackMs;
    this.#renewRatio = options.renewAfterRatio;
    this.#wall = options.wall;
    this.#mono = options.mono;
    this.#emit = options.emit;
    this.#onLeased = options.onLeased;
    this.#onEnded = options.onEnded;
  }

  /** The lease held now, if any. */
  get held(): Held | undefined {
    return this.#held;
  }

  /** Why no lease is held (when none is). */
  get ended(): string {
    return this.#ended;
  }

  /** This clock minus the server's at the last lease or renewal. */
  get skewMs(): number | undefined {
    return this.#skew;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Stops renewing and releases the lease with the last millisecond used (read once nothing else can change it). */
  async close(lastUsed: () => number): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#taking?.catch(() => undefined);
    const held = this.#held;
    this.end('closed');
    if (held === undefined) return;
    const lastUsedMs = lastUsed();
    await this.#requests.release(held.workerId, held.epoch, lastUsedMs).then(
      () => this.#emit({ type: 'released', workerId: held.workerId, lastUsedMs }),
      // Unreleased, the lease simply runs out; its worker ID is free after the reuse delay.
      (error: unknown) =>
        this.#emit({ type: 'lease-ended', workerId: held.workerId, reason: `release failed: ${String(error)}` }),
    );
  }

  /** Takes a lease, single-flight; resolves once it is held (or throws why not). A take no URL granted is a `take-failed` event. */
  take(): Promise<void> {
    this.#taking ??= this.#takeOnce()
      .catch((error: unknown) => {
        if (error instanceof LeaseFailedError && !this.#closed)
          this.#emit({ type: 'take-failed', error: error.message, codes: error.codes });
        throw error;
      })
      .finally(() => {
        this.#taking = undefined;
      });
    return this.#taking;
  }

  /**
   * Resolves once a lease is held, trying again every RETAKE_DELAY_MS while ticketd may yet grant
   * one (unreachable, restarting, or the pool full: 503 TICKETD_POOL_EXHAUSTED), for up to `waitMs`;
   * then NoLeaseError with the last failure as its cause. A refusal (a 4xx, a layout or clock the
   * lease cannot be used with) and a closed generator throw at once.
   */
  async waitForLease(waitMs: number, pool: string): Promise<void> {
    const deadline = this.#mono() + waitMs;
    while (this.#held === undefined) {
      if (this.#closed) throw new NoLeaseError('generator is closed');
      try {
        await this.take();
      } catch (error) {
        if (!(error instanceof LeaseFailedError) || !error.retryable) throw error;
        const left = deadline - this.#mono();
        if (left <= 0)
          throw new NoLeaseError(
            `no lease of a worker ID of pool ${pool} within ${waitMs} ms (leaseWaitMs): ${error.message}`,
            { cause: error },
          );
        await sleep(Math.min(RETAKE_DELAY_MS, left));
      }
    }
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
    this.#onLeased(lease.highWaterMs);
    this.#held = {
      workerId: lease.workerId,
      epoch: lease.epoch,
      maxSkewMs: lease.maxSkewMs,
      renewEveryMs: Math.max(100, lease.ttlMs * this.#renewRatio),
      expiresMono: asked + lease.expiresInMs,
      serverMs: lease.serverTimeMs,
      answeredMono: answered,
    };
    this.#emit({
      type: 'leased',
      workerId: lease.workerId,
      epoch: lease.epoch,
      expiresInMs: lease.expiresInMs,
      highWaterMs: lease.highWaterMs,
    });
    this.#schedule(this.#held.renewEveryMs);
  }

  /** Why a lease cannot be used here: the layout cannot hold its worker ID, or this clock is off the server's. */
  #refusal(lease: LeaseAnswer, skew: number): Error | undefined {
    if (lease.workerBits > this.#workerBits)
      return new SnowflakeLayoutError(
        `pool ${lease.pool} has ${lease.workerBits}-bit worker IDs; layout.workerBits is ${this.#workerBits}`,
      );
    if (Math.abs(skew) > lease.maxSkewMs) {
      this.#emit({ type: 'skew', skewMs: skew, limitMs: lease.maxSkewMs });
      return new ClockSkewError(
        `this clock is ${skewText(skew)} the server's (limit ${lease.maxSkewMs} ms, the pool's maxSkewMs); lease given back`,
      );
    }
    const wait = lease.highWaterMs - this.#wall();
    if (wait > 2 * lease.maxSkewMs + this.#maxStepBack)
      return new ClockMovedBackError(
        `the worker ID's earlier holders used timestamps ${wait} ms ahead of this clock; lease given back`,
      );
    return undefined;
  }

  #schedule(ms: number): void {
    clearTimeout(this.#timer);
    if (this.#closed) return;
    this.#timer = setTimeout(() => void this.#renew(), ms);
    unrefTimer(this.#timer);
  }

  async #renew(): Promise<void> {
    const held = this.#held;
    if (held === undefined || this.#closed) return;
    const asked = this.#mono();
    const wallAsked = this.#wall();
    try {
      const lease = await this.#requests.renew(
        held.workerId,
        held.epoch,
        this.#skew === undefined ? undefined : Math.round(this.#skew),
      );
      if (this.#held !== held) return;
      const answered = this.#mono();
      this.#skew = measuredSkew(wallAsked, this.#wall(), lease.serverTimeMs);
      held.expiresMono = asked + lease.expiresInMs;
      held.serverMs = lease.serverTimeMs;
      held.answeredMono = answered;
      this.#emit({ type: 'renewed', workerId: held.workerId, skewMs: this.#skew });
      if (Math.abs(this.#skew) > held.maxSkewMs)
        this.#emit({ type: 'skew', skewMs: this.#skew, limitMs: held.maxSkewMs });
      this.#schedule(held.renewEveryMs);
    } catch (error) {
      if (this.#held !== held) return;
      if (leaseIsLost(error)) {
        this.end(`ticketd answered that the lease of worker ${held.workerId} is lost`);
        this.retake();
        return;
      }
      const leftMs = held.expiresMono - this.#mono();
      this.#emit({ type: 'renew-failed', workerId: held.workerId, error: String(error), leftMs });
      if (leftMs <= 0) {
        // Over: an idle generator learns it here rather than at its next ID.
        this.end(`lease of worker ${held.workerId} ran out unrenewed`);
        this.retake();
        return;
      }
      // Try again while the lease lasts.
      this.#schedule(Math.max(50, Math.min(1000, leftMs / 4)));
    }
  }

  /** Ends the lease held: nothing more is issued on it, not even in the millisecond open now. */
  end(reason: string): void {
    const held = this.#held;
    this.#held = undefined;
    this.#ended = reason;
    this.#onEnded();
    clearTimeout(this.#timer);
    if (held !== undefined && !this.#closed) this.#emit({ type: 'lease-ended', workerId: held.workerId, reason });
  }

  /** Takes a new lease in the background, trying again until one is held or the generator is closed. */
  retake(): void {
    if (this.#closed || this.#taking !== undefined) return;
    this.take().catch(() => {
      this.#timer = setTimeout(() => this.retake(), RETAKE_DELAY_MS);
      unrefTimer(this.#timer);
    });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

/** Lets the process exit with the timer pending: outside Node (a browser) a timer is a number, without unref. */
function unrefTimer(timer: unknown): void {
  (timer as { unref?: () => void }).unref?.();
}
