/**
 * Turns tickets from the backends into ID ranges. Every ticket passes the parity and high-water
 * checks of core/ticket-math, and its mark is stored on a peer backend, before its block is used.
 * Backends sit behind circuit breakers; a refill never waits long on a slow one.
 */
import pRetry from 'p-retry';
import { Backend, DEFAULT_BACKEND_OPTIONS, type BackendOptions } from '../backend/backend.js';
import type { BackendAddress } from '../backend/backend-address.js';
import { sameSettings, type SequenceSettings } from '../core/sequence.js';
import { serverProblems, type ServerSettings } from '../core/server-checks.js';
import { stripeProblem } from '../core/stripes.js';
import { blockForTicket, firstUsefulTicket, HighWaterMarks, type IdRange, type Stripe } from '../core/ticket-math.js';
import { BackendMisconfiguredError, BackendsUnavailableError } from '../errors.js';
import type { Logger } from '../logger.js';
import { Breaker, DEFAULT_BREAKER_OPTIONS, type BreakerOptions, type Clock, type Random } from './breaker.js';
import { BackendHealth } from './backend-health.js';
import { Rejoin, type RegressionPolicy } from './rejoin.js';
import { NO_EVENTS, type AllocatorEvents } from './events.js';
import { firstSuccess, markFor } from './mark-store.js';
import { runRound, type RoundResult } from './refill-round.js';
import { emptyHandedError, newSlot, sequenceStatusOf, statusOf, type BackendSequenceStatus, type BackendStatus, type Slot } from './slot.js';

export type { BackendSequenceStatus, BackendStats, BackendStatus } from './slot.js';
export type { RegressionPolicy } from './rejoin.js';

/** How long a backend found lacking a sequence (or disagreeing on it) is left before asking again. */
export const MEMBERSHIP_RECHECK_MS = 5000;
/** Once one backend has delivered, how long a refill waits for the others before returning. */
export const STRAGGLER_GRACE_MS = 50;
/** Tickets fetched from one backend before their blocks are passed on (and the refill can return). */
export const LANE_CHUNK_TICKETS = 16;
/** A refill slower than this is logged with what each of its lanes did. */
export const SLOW_REFILL_MS = 500;
/** A refill that has no tickets after this long also asks a backend it had not asked. */
export const HEDGE_AFTER_MS = 100;
/** ER_AUTOINC_READ_FAILED and ER_WARN_DATA_OUT_OF_RANGE: the counter reached the column's maximum. */
const COUNTER_OVERFLOW_ERRNOS = new Set([1467, 1264]);

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
  /** Where fetches, failovers and regressions are reported (metrics). */
  readonly events?: AllocatorEvents;
}


/** Fetches tickets round-robin over the backends and maps them to ranges. */
export class Allocator {
  readonly #slots: Slot[];
  readonly #stripes = new Map<string, Stripe>();
  readonly #marks = new HighWaterMarks();
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #allowUnsafeDurability: boolean;
  readonly #events: AllocatorEvents;
  readonly #health: BackendHealth;
  readonly #rejoin: Rejoin;
  #cursor = 0;

  constructor(options: AllocatorOptions) {
    this.#logger = options.logger;
    this.#clock = options.clock ?? Date.now;
    this.#allowUnsafeDurability = options.allowUnsafeDurability ?? false;
    this.#events = options.events ?? NO_EVENTS;
    this.#health = new BackendHealth(this.#logger, this.#clock);
    const random = options.random ?? Math.random;
    const guard = (backend: Backend, settings: ServerSettings): void => this.#checkConnection(backend, settings);
    this.#slots = options.backends.map((address, i) =>
      newSlot(
        new Backend(address, guard, options.backendOptions ?? DEFAULT_BACKEND_OPTIONS, options.adminBackends?.[i]),
        new Breaker(this.#clock, random, options.breakerOptions ?? DEFAULT_BREAKER_OPTIONS),
      ),
    );
    this.#rejoin = new Rejoin({
      slots: this.#slots,
      stripes: this.#stripes,
      marks: this.#marks,
      logger: this.#logger,
      events: this.#events,
      health: this.#health,
      policy: options.regressionPolicy ?? 'advance',
    });
  }

  /** The backends, in configured order. */
  get backends(): readonly Backend[] {
    return this.#slots.map((s) => s.backend);
  }

  #checkConnection(backend: Backend, settings: ServerSettings): void {
    // Runs for every new connection, so a backend restarted without its option file is caught.
    const slot = this.#slots.find((s) => s.backend === backend)!;
    const problems = serverProblems(backend.label, settings, this.#allowUnsafeDurability);
    const problem = stripeProblem(backend.label, settings, this.#stripes, this.#slots.length) ?? problems.fatal[0];
    if (problem !== undefined) throw new BackendMisconfiguredError(problem);
    if (!slot.warned && problems.warnings.length > 0) {
      slot.warned = true;
      for (const warning of problems.warnings) this.#logger.warn({ backend: backend.label }, `unsafe durability allowed: ${warning}`);
    }
    if (slot.identity !== undefined && settings.identity !== slot.identity) {
      // Another server (or a re-initialised one) now answers at this URL: reload marks before use.
      this.#logger.error({ backend: backend.label, was: slot.identity, now: settings.identity }, 'backend identity changed');
      slot.prepared.clear();
    }
    slot.identity = settings.identity;
    this.#stripes.set(backend.label, { increment: settings.increment, offset: settings.offset });
  }

  /** Connects to every backend once, checking its settings. Returns the failures. */
  async probe(): Promise<{ backend: string; error: unknown }[]> {
    const failures: { backend: string; error: unknown }[] = [];
    await Promise.all(
      this.#slots.map(async (slot) => {
        try {
          await slot.backend.settings();
          this.#health.recordSuccess(slot);
        } catch (error) {
          this.#health.recordFailure(slot, error);
          failures.push({ backend: slot.backend.label, error });
        }
      }),
    );
    return failures;
  }

  /** True when at least one backend's breaker is closed and its last call did not fail. */
  get anyBackendAvailable(): boolean {
    return this.#slots.some((s) => s.breaker.state === 'up' || s.breaker.state === 'unknown');
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
        await this.#health.probeIfNoneClosed(this.#slots, settings.name);
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
    const candidates = rotated.filter((s) => s.breaker.closed && !s.exhausted.has(name) && !s.quarantined.has(name));
    const inTurn = rotated[0]!;
    // The backend whose turn it was is out (open, quarantined): its share goes to the others.
    if (candidates.length > 0 && !candidates.includes(inTurn) && !inTurn.exhausted.has(name)) this.#events.failover(name, inTurn.backend.label);
    const perLane = (i: number): number => Math.floor(tickets / candidates.length) + (i < tickets % candidates.length ? 1 : 0);
    const lanes = candidates.slice(0, tickets).map((slot, i) => ({ slot, count: perLane(i) }));
    const spares = candidates.slice(lanes.length);
    trace.push('|');
    const started = new Map<Slot, number>();
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

  #rotate(): Slot[] {
    // Round-robin start, so that single-ticket refills alternate and the counters advance together.
    const start = this.#cursor++ % this.#slots.length;
    return [...this.#slots.slice(start), ...this.#slots.slice(0, start)];
  }

  /**
   * One backend's part of a refill, in chunks of at most LANE_CHUNK_TICKETS: each chunk's blocks
   * are checked, their mark stored on a peer, then passed to `deliver`, so that a long run on one
   * backend does not keep waiting requests from the first blocks. Never rejects.
   */
  async #fetchFrom(slot: Slot, settings: SequenceSettings, count: number, deliver: (ranges: IdRange[]) => void): Promise<{ retry: boolean }> {
    const name = settings.name;
    try {
      if (!(await this.#hasSequence(slot, settings))) return { retry: false };
      if (!slot.prepared.has(name)) await this.#rejoin.prepare(slot, settings);
      if (slot.quarantined.has(name)) return { retry: true };
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

  async #fetchChunk(slot: Slot, settings: SequenceSettings, count: number): Promise<{ ranges: IdRange[]; retry: boolean; stop: boolean }> {
    const name = settings.name;
    const label = slot.backend.label;
    const started = this.#clock();
    const batch = await slot.backend.fetchTickets(name, count);
    slot.stats.fetches++;
    this.#events.ticketFetch(label, (this.#clock() - started) / 1000, batch.tickets.length, batch.error !== undefined);
    const stripe = this.#stripes.get(label);
    const ranges: IdRange[] = [];
    let highest: bigint | undefined;
    let retry = false;
    let stop = false;
    for (const ticket of batch.tickets) {
      try {
        if (stripe === undefined) throw new BackendMisconfiguredError(`backend ${label} has no checked stripe`);
        this.#marks.accept(label, name, ticket, stripe);
      } catch (error) {
        retry = await this.#rejoin.onRefusedTicket(slot, settings, ticket, error);
        stop = true;
        break;
      }
      highest = ticket;
      slot.stats.tickets++;
      const outcome = blockForTicket(ticket, settings);
      if (outcome.kind === 'range') {
        ranges.push(outcome.range);
        // Tickets only grow, so after the block that reaches maxId this backend has nothing left.
        if (outcome.range.last === settings.maxId) {
          this.#markExhausted(slot, name, ticket);
          stop = true;
        }
      } else if (outcome.kind === 'exhausted') {
        this.#markExhausted(slot, name, ticket);
        stop = true;
        break;
      } else {
        // A counter behind startAfter (table created by hand): move it forward rather than burn tickets.
        retry = true;
        stop = true;
        await slot.backend.advanceCounter(name, firstUsefulTicket(settings)).catch((e: unknown) => this.#health.recordFailure(slot, e));
        break;
      }
    }
    if (highest !== undefined) {
      slot.lastTicket.set(name, highest);
      // The mark is stored on a peer before any of these blocks is handed out: another process
      // that finds this backend's counter gone back, or a ticketd started after a restore, then
      // advances it past these tickets. Only when every peer fails (and is counted as failing) are
      // the blocks handed out on this process's own mark alone.
      const peers = this.#slots.filter((s) => s !== slot && s.breaker.closed);
      const mark = markFor(name, stripe!, highest);
      const writes = peers.map((peer) =>
        peer.backend.writeMarks([mark], slot.identity ?? label).catch((error: unknown) => {
          this.#health.recordFailure(peer, error);
          throw error;
        }),
      );
      if (!(await firstSuccess(writes)) && peers.length > 0) {
        this.#logger.warn({ backend: label, sequence: name, ticket: highest }, 'high-water mark could not be stored on any peer');
      }
    }
    if (batch.error === undefined) this.#health.recordSuccess(slot);
    else if (isCounterOverflow(batch.error)) {
      this.#markExhausted(slot, name, highest);
      stop = true;
    } else {
      this.#health.recordFailure(slot, batch.error);
      retry = true;
      stop = true;
    }
    return { ranges, retry, stop };
  }

  async #hasSequence(slot: Slot, settings: SequenceSettings): Promise<boolean> {
    const known = slot.membership.get(settings.name);
    if (known?.kind === 'present') return true;
    if (known !== undefined && this.#clock() - known.checkedAt < MEMBERSHIP_RECHECK_MS) return false;
    const row = await slot.backend.readSequence(settings.name);
    const kind = row === undefined ? 'absent' : sameSettings(row, settings) ? 'present' : 'conflict';
    slot.membership.set(settings.name, { kind, checkedAt: this.#clock() });
    if (kind === 'conflict') {
      this.#logger.error(
        { backend: slot.backend.label, sequence: settings.name },
        'backend has the sequence with other settings; not used for it until fixed (ticketd check reports it)',
      );
    }
    return kind === 'present';
  }

  /** Records that this process created the sequence on a backend. */
  notePresent(backend: Backend, name: string): void {
    const slot = this.#slots.find((s) => s.backend === backend);
    slot?.membership.set(name, { kind: 'present', checkedAt: this.#clock() });
  }

  #markExhausted(slot: Slot, sequence: string, ticket: bigint | undefined): void {
    slot.exhausted.add(sequence);
    this.#logger.warn({ backend: slot.backend.label, sequence, ticket }, 'backend has no tickets left at or below maxId');
  }

  /** Operator view of every backend. */
  status(): BackendStatus[] {
    return this.#slots.map((s) => statusOf(s, this.#stripes.get(s.backend.label)));
  }

  /** Per-backend view of one sequence. */
  sequenceStatus(name: string): BackendSequenceStatus[] {
    return this.#slots.map((s) => sequenceStatusOf(s, name));
  }

  /** Stops background probes and closes every backend pool. */
  async close(): Promise<void> {
    this.#health.close(this.#slots);
    await Promise.all(this.#slots.map((s) => s.backend.close()));
  }
}

/** Marks a round that found nothing but may find something on a retry. */
class RetryRound extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}

function isCounterOverflow(error: unknown): boolean {
  const errno = (error as { errno?: unknown } | null)?.errno;
  return typeof errno === 'number' && COUNTER_OVERFLOW_ERRNOS.has(errno);
}
