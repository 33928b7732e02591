/**
 * Turns tickets from the backends into ID ranges. Every ticket passes its lane's steps (parity,
 * the process mark, then a claim on a peer) before its block is used. Backends sit behind circuit
 * breakers; a refill never waits long on a slow one.
 */
import pRetry from 'p-retry';
import { Backend, DEFAULT_BACKEND_OPTIONS, type BackendOptions, type ConnectionGuard } from '../backend/backend.js';
import type { BackendAddress } from '../backend/backend-address.js';
import type { TicketBackend } from '../backend/ticket-backend.js';
import type { IdRange } from '../core/blocks.js';
import type { ClaimsPolicy } from '../core/claims.js';
import { mustRecheck, usable, type RegressionPolicy } from '../core/lane.js';
import { sameSettings, type SequenceSettings } from '../core/sequence.js';
import { judgeConnection, type ServerSettings, type Stripe } from '../core/stripes.js';
import { BackendMisconfiguredError, BackendsUnavailableError, CounterOverflowError, TicketdError } from '../errors.js';
import type { Logger } from '../logger.js';
import { Breaker, DEFAULT_BREAKER_OPTIONS, type BreakerOptions, type Clock, type Random } from './breaker.js';
import { BackendHealth } from './backend-health.js';
import { Claimer, DEFAULT_CLAIMS_KEPT } from './claims.js';
import { Rejoin, type ReleaseResult } from './rejoin.js';
import { NO_EVENTS, type AllocatorEvents } from './events.js';
import { runRound, type RoundResult } from './refill-round.js';
import { BackendSlot, emptyHandedError, type BackendSequenceStatus, type BackendStatus } from './backend-slot.js';

export type { BackendSequenceStatus, BackendStats, BackendStatus } from './backend-slot.js';
export type { ReleaseResult } from './rejoin.js';
export type { ClaimsPolicy } from '../core/claims.js';
export type { RegressionPolicy } from '../core/lane.js';

/** How long a backend found lacking a sequence (or disagreeing on it) is left before asking again. */
export const MEMBERSHIP_RECHECK_MS = 5000;
/** Once one backend has delivered, how long a refill waits for the others before returning. */
export const STRAGGLER_GRACE_MS = 50;
/** Tickets fetched from one backend before their blocks are claimed and passed on (and the refill can return). */
export const LANE_CHUNK_TICKETS = 16;
/** A refill slower than this is logged with what each of its lanes did. */
export const SLOW_REFILL_MS = 500;
/** A refill that has no tickets after this long also asks a backend it had not asked. */
export const HEDGE_AFTER_MS = 100;
/**
 * A backend not used for this long is prepared afresh before its next tickets are used: the
 * server behind its address may have been replaced (a promoted replica) while this process idled.
 */
export const IDLE_REVALIDATE_MS = 5000;

/** Makes the backend for an address (tests pass fakes). */
export type BackendFactory = (address: BackendAddress, guard: ConnectionGuard, admin: BackendAddress | undefined) => TicketBackend;

/** Dependencies and policies of the allocator. */
export interface AllocatorOptions {
  readonly backends: readonly BackendAddress[];
  /** Accounts for schema and counter changes, one per backend in the same order (optional). */
  readonly adminBackends?: readonly BackendAddress[];
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly random?: Random;
  readonly backendOptions?: BackendOptions;
  readonly breakerOptions?: BreakerOptions;
  /** Demos only: accept backends without crash-safe durability settings (logs a warning). */
  readonly allowUnsafeDurability?: boolean;
  readonly regressionPolicy?: RegressionPolicy;
  /** When no peer takes a claim: serve on the process marks (`preferred`, default) or refuse. */
  readonly claimsPolicy?: ClaimsPolicy;
  /** Claims kept per sequence, residue class and peer before older ones are pruned to a floor. */
  readonly claimsKept?: number;
  readonly idleRevalidateMs?: number;
  /** Where fetches, failovers, regressions and unclaimed tickets are reported (metrics). */
  readonly events?: AllocatorEvents;
  /** Makes each backend; default: a MySQL `Backend`. */
  readonly connect?: BackendFactory;
}

/** One backend's answer to an operation run on every backend. */
export type BackendAnswer<T> = { readonly backend: TicketBackend } & ({ readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown });

/** Fetches tickets round-robin over the backends and maps them to ranges. */
export class Allocator {
  readonly #slots: BackendSlot[];
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #allowUnsafeDurability: boolean;
  readonly #idleRevalidateMs: number;
  readonly #events: AllocatorEvents;
  readonly #health: BackendHealth;
  readonly #rejoin: Rejoin;
  readonly #claimer: Claimer;
  #cursor = 0;

  constructor(options: AllocatorOptions) {
    this.#logger = options.logger;
    this.#clock = options.clock ?? Date.now;
    this.#allowUnsafeDurability = options.allowUnsafeDurability ?? false;
    this.#idleRevalidateMs = options.idleRevalidateMs ?? IDLE_REVALIDATE_MS;
    this.#events = options.events ?? NO_EVENTS;
    this.#health = new BackendHealth(this.#logger, this.#clock);
    const random = options.random ?? Math.random;
    const guard: ConnectionGuard = (backend, settings) => this.#checkConnection(backend, settings);
    const backendOptions = options.backendOptions ?? DEFAULT_BACKEND_OPTIONS;
    const connect = options.connect ?? ((address, g, admin) => new Backend(address, g, backendOptions, admin));
    this.#slots = options.backends.map((address, i) =>
      new BackendSlot(connect(address, guard, options.adminBackends?.[i]), new Breaker(this.#clock, random, options.breakerOptions ?? DEFAULT_BREAKER_OPTIONS)),
    );
    this.#claimer = new Claimer({
      slots: this.#slots,
      health: this.#health,
      events: this.#events,
      logger: this.#logger,
      policy: options.claimsPolicy ?? 'preferred',
      waitMs: backendOptions.claimTimeoutMs,
      keep: options.claimsKept ?? DEFAULT_CLAIMS_KEPT,
    });
    this.#rejoin = new Rejoin({
      slots: this.#slots,
      logger: this.#logger,
      events: this.#events,
      health: this.#health,
      policy: options.regressionPolicy ?? 'advance',
    });
  }

  /** The backends, in configured order. */
  get backends(): readonly TicketBackend[] {
    return this.#slots.map((s) => s.backend);
  }

  #checkConnection(backend: TicketBackend, settings: ServerSettings): void {
    // Runs for every new connection (and every connection again after a break or an idle spell),
    // so a backend restarted without its option file, or another server behind its address, is caught.
    const slot = this.#slots.find((s) => s.label === backend.label)!;
    const pinned = new Map<string, Stripe>();
    for (const s of this.#slots) if (s.stripe !== undefined) pinned.set(s.label, s.stripe);
    const verdict = judgeConnection(backend.label, settings, {
      pinned,
      backendCount: this.#slots.length,
      allowUnsafeDurability: this.#allowUnsafeDurability,
      knownIdentity: slot.identity,
    });
    if (verdict.problem !== undefined) throw new BackendMisconfiguredError(verdict.problem);
    if (verdict.identityChanged) {
      // Another server (or a re-initialised one) now answers at this URL: check it against the claims before use.
      this.#logger.error({ backend: backend.label, was: slot.identity, now: settings.identity }, 'backend identity changed');
    }
    if (slot.noteConnection(settings, verdict.identityChanged, verdict.warnings.length > 0)) {
      for (const warning of verdict.warnings) this.#logger.warn({ backend: backend.label }, `unsafe durability allowed: ${warning}`);
    }
  }

  /** Connects to every backend once, checking its settings. Returns the failures. */
  async probe(): Promise<{ backend: string; error: unknown }[]> {
    const answers = await this.everywhere((b) => b.settings());
    return answers.flatMap((a) => (a.ok ? [] : [{ backend: a.backend.label, error: a.error }]));
  }

  /**
   * Runs an operation on every backend whose breaker is closed, at once, feeding the outcomes to
   * the breakers. An open backend is answered for without a call. A refusal in ticketd's own terms
   * (a conflicting sequence, a missing grant) is an answer, not a failure of the backend.
   */
  async everywhere<T>(operation: (backend: TicketBackend) => Promise<T>, options: { includeOpen?: boolean } = {}): Promise<BackendAnswer<T>[]> {
    return Promise.all(
      this.#slots.map(async (slot): Promise<BackendAnswer<T>> => {
        const backend = slot.backend;
        if (!slot.closed && options.includeOpen !== true) {
          return { backend, ok: false, error: new BackendsUnavailableError(`backend ${backend.label} is ${slot.state}: ${slot.lastError ?? 'no answer'}`) };
        }
        try {
          const value = await operation(backend);
          this.#health.recordSuccess(slot);
          return { backend, ok: true, value };
        } catch (error) {
          if (!(error instanceof TicketdError) || error instanceof BackendMisconfiguredError) this.#health.recordFailure(slot, error);
          return { backend, ok: false, error };
        }
      }),
    );
  }

  /** True when at least one backend's breaker is closed and its last call did not fail. */
  get anyBackendAvailable(): boolean {
    return this.#slots.some((s) => s.state === 'up' || s.state === 'unknown');
  }

  /**
   * Fetches about `tickets` tickets' worth of ranges, spread over the closed backends in rounds
   * (refill-round.ts): a round returns STRAGGLER_GRACE_MS after the first chunk of blocks arrived,
   * and the rest go to `onLate`. Retries (p-retry) only when a round got nothing and another may.
   */
  async fetchRanges(settings: SequenceSettings, tickets: number, onLate: (ranges: IdRange[]) => void = () => undefined): Promise<IdRange[]> {
    const started = this.#clock();
    const trace: string[] = [];
    return pRetry(
      async () => {
        await this.#health.probeIfNoneClosed(this.#slots, (s) => usable(s.lane(settings.name)));
        const { ranges, retry } = await this.#fetchRound(settings, Math.max(1, tickets), onLate, trace);
        if (ranges.length > 0) return ranges.sort((a, b) => (a.first < b.first ? -1 : 1));
        const error = emptyHandedError(this.#slots, settings.name);
        if (retry && error instanceof BackendsUnavailableError) throw new RetryRound(error);
        throw error;
      },
      {
        retries: 3,
        minTimeout: 10,
        maxTimeout: 200,
        randomize: true,
        // Safe to retry: a REPLACE that failed either took no ticket or one that is now only a gap.
        shouldRetry: ({ error }) => error instanceof RetryRound,
      },
    )
      .catch((error: unknown) => {
        throw error instanceof RetryRound ? error.cause : error;
      })
      .finally(() => {
        const ms = this.#clock() - started;
        // What each lane did, for the operator who sees requests wait on a refill.
        if (ms > SLOW_REFILL_MS) this.#logger.warn({ sequence: settings.name, ms, tickets, lanes: trace.join(' ') }, 'slow refill');
      });
  }

  #fetchRound(settings: SequenceSettings, tickets: number, onLate: (ranges: IdRange[]) => void, trace: string[]): Promise<RoundResult> {
    const name = settings.name;
    const rotated = this.#rotate();
    const candidates = rotated.filter((s) => s.closed && usable(s.lane(name)));
    const inTurn = rotated[0]!;
    // The backend whose turn it was is out (open, quarantined): its share goes to the others.
    if (candidates.length > 0 && !candidates.includes(inTurn) && inTurn.lane(name).phase !== 'exhausted') this.#events.failover(name, inTurn.label);
    const perLane = (i: number): number => Math.floor(tickets / candidates.length) + (i < tickets % candidates.length ? 1 : 0);
    const lanes = candidates.slice(0, tickets).map((slot, i) => ({ slot, count: perLane(i) }));
    const spares = candidates.slice(lanes.length);
    trace.push('|');
    const started = new Map<BackendSlot, number>();
    return runRound({
      lanes,
      spares,
      run: (slot, count, deliver) => {
        started.set(slot, this.#clock());
        return this.#fetchFrom(slot, settings, count, deliver).then((result) => {
          if (result.retry) this.#events.failover(name, slot.backend.label);
          return result;
        }, (error: unknown) => {
          this.#events.failover(name, slot.backend.label);
          this.#logger.error({ backend: slot.backend.label, err: String(error) }, 'refill lane failed');
          return { retry: true };
        });
      },
      onLate,
      graceMs: STRAGGLER_GRACE_MS,
      hedgeMs: HEDGE_AFTER_MS,
      onLaneEnd: (slot, count, late) => {
        trace.push(`${slot.backend.label}:${count}t:${this.#clock() - (started.get(slot) ?? 0)}ms${late ? ':late' : ''}`);
      },
    });
  }

  #rotate(): BackendSlot[] {
    // Round-robin start, so that single-ticket refills alternate and the counters advance together.
    const start = this.#cursor++ % this.#slots.length;
    return [...this.#slots.slice(start), ...this.#slots.slice(0, start)];
  }

  /**
   * One backend's part of a refill, in chunks of at most LANE_CHUNK_TICKETS: each chunk's tickets
   * are checked and claimed, then their blocks passed to `deliver`, so that a long run on one
   * backend does not keep waiting requests from the first blocks. Never rejects.
   */
  async #fetchFrom(slot: BackendSlot, settings: SequenceSettings, count: number, deliver: (ranges: IdRange[]) => void): Promise<{ retry: boolean }> {
    const name = settings.name;
    // Idle for a while: the server behind the address may not be the one this process knew.
    if (mustRecheck(slot.lastUsedAt, this.#clock(), this.#idleRevalidateMs)) slot.forgetAfterIdle();
    if (!this.#claimer.canServe(slot, name)) return { retry: false };
    try {
      if (!(await this.#hasSequence(slot, settings))) return { retry: false };
      if (slot.lane(name).phase === 'unchecked') await this.#rejoin.prepare(slot, settings);
      if (slot.lane(name).phase === 'quarantined') return { retry: true };
    } catch (error) {
      this.#health.recordFailure(slot, error);
      return { retry: true };
    }
    for (let left = count; left > 0; ) {
      const chunk = Math.min(LANE_CHUNK_TICKETS, left);
      const outcome = await this.#fetchChunk(slot, settings, chunk);
      deliver(outcome.ranges);
      if (outcome.stop) return { retry: outcome.retry };
      left -= chunk;
    }
    return { retry: false };
  }

  /**
   * One chunk: fetch, then let the lane's steps decide (parity and mark, then the claims) which
   * blocks may be served; carry out what they ask (an advance, a regression's handling).
   */
  async #fetchChunk(slot: BackendSlot, settings: SequenceSettings, count: number): Promise<{ ranges: IdRange[]; retry: boolean; stop: boolean }> {
    const name = settings.name;
    const label = slot.label;
    const started = this.#clock();
    const batch = await slot.backend.fetchTickets(name, count);
    slot.noteFetch(this.#clock());
    this.#events.ticketFetch(label, (slot.lastUsedAt - started) / 1000, batch.tickets.length, batch.error !== undefined);
    const stripe = slot.stripe;
    if (stripe === undefined) {
      this.#health.recordFailure(slot, new BackendMisconfiguredError(`backend ${label} has no checked stripe`));
      return { ranges: [], retry: true, stop: true };
    }
    const fetched = slot.apply(name, { kind: 'tickets', tickets: batch.tickets, stripe, where: `backend ${label}` });
    let ranges: IdRange[] = [];
    let stop = false;
    let retry = false;
    if (fetched.accepted.length > 0) {
      const claimed = await this.#claimer.claim(slot, settings, stripe, fetched.accepted);
      if (claimed.refusal !== undefined) await this.#rejoin.onRefused(slot, settings, claimed.refusal);
      if (claimed.withheld) return { ranges: [], retry: true, stop: true };
      ranges = [...claimed.serve];
      stop = claimed.stop;
      // Stopped short of exhaustion: a counter below startAfter, moved forward now.
      retry = claimed.stop && slot.lane(name).phase !== 'exhausted';
      const advance = claimed.effects.find((e) => e.kind === 'advance');
      if (advance !== undefined) await slot.backend.advanceCounter(name, advance.to).catch((e: unknown) => this.#health.recordFailure(slot, e));
      for (const note of claimed.notes) if (note.kind === 'exhausted') this.#logExhausted(slot, name, note.ticket);
    }
    if (fetched.refusal !== undefined) {
      await this.#rejoin.onRefused(slot, settings, fetched.refusal);
      return { ranges, retry: true, stop: true };
    }
    if (batch.error === undefined) {
      this.#health.recordSuccess(slot);
    } else if (batch.error instanceof CounterOverflowError) {
      const last = fetched.accepted[fetched.accepted.length - 1];
      slot.apply(name, { kind: 'overflow', ticket: last });
      this.#logExhausted(slot, name, last);
      stop = true;
    } else {
      this.#health.recordFailure(slot, batch.error);
      return { ranges, retry: true, stop: true };
    }
    return { ranges, retry, stop };
  }

  async #hasSequence(slot: BackendSlot, settings: SequenceSettings): Promise<boolean> {
    const known = slot.membership(settings.name);
    if (known?.kind === 'present') return true;
    if (known !== undefined && this.#clock() - known.checkedAt < MEMBERSHIP_RECHECK_MS) return false;
    const row = await slot.backend.readSequence(settings.name);
    const kind = row === undefined ? 'absent' : sameSettings(row, settings) ? 'present' : 'conflict';
    slot.setMembership(settings.name, { kind, checkedAt: this.#clock() });
    if (kind === 'conflict') {
      this.#logger.error(
        { backend: slot.backend.label, sequence: settings.name },
        'backend has the sequence with other settings; not used for it until fixed (ticketd check reports it)',
      );
    }
    return kind === 'present';
  }

  /** Records that this process created the sequence on a backend. */
  notePresent(backend: TicketBackend, name: string): void {
    const slot = this.#slots.find((s) => s.backend === backend);
    slot?.setMembership(name, { kind: 'present', checkedAt: this.#clock() });
  }

  /** Re-checks a backend against its peers' claims and lets it serve the sequence again (see Rejoin.release). */
  release(label: string, settings: SequenceSettings): Promise<ReleaseResult> {
    return this.#rejoin.release(label, settings);
  }

  #logExhausted(slot: BackendSlot, sequence: string, ticket: bigint | undefined): void {
    this.#logger.warn({ backend: slot.label, sequence, ticket }, 'backend has no tickets left at or below maxId');
  }

  /** Operator view of every backend. */
  status(): BackendStatus[] {
    return this.#slots.map((s) => s.status());
  }

  /** Per-backend view of one sequence. */
  sequenceStatus(name: string): BackendSequenceStatus[] {
    return this.#slots.map((s) => s.sequenceStatus(name));
  }

  /** Stops background probes, waits for prunes in flight and closes every backend pool. */
  async close(): Promise<void> {
    this.#health.close(this.#slots);
    await this.#claimer.drain();
    await Promise.all(this.#slots.map((s) => s.backend.close()));
  }
}

/** Marks a round that found nothing but may find something on a retry. */
class RetryRound extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}
