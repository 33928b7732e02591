/**
 * Turns tickets from the backends into ID ranges. Every ticket passes the parity and high-water
 * checks of core/ticket-math before its block is used; a backend that fails is skipped until its
 * backoff runs out.
 */
import { Backend, DEFAULT_BACKEND_OPTIONS, type BackendOptions, type SessionSettings } from '../backend/backend.js';
import type { BackendAddress } from '../backend/backend-address.js';
import { sameSettings, type SequenceSettings } from '../core/sequence.js';
import { stripeProblem } from '../core/stripes.js';
import {
  blockForTicket,
  firstUsefulTicket,
  HighWaterMarks,
  type IdRange,
  type Stripe,
} from '../core/ticket-math.js';
import {
  BackendMisconfiguredError,
  BackendsUnavailableError,
  SequenceExhaustedError,
  SequenceNotFoundError,
  TicketRegressionError,
} from '../errors.js';
import type { Logger } from '../logger.js';
import { BackendHealth, type Clock, type HealthState, type Random } from './backend-health.js';

/** ER_AUTOINC_READ_FAILED and ER_WARN_DATA_OUT_OF_RANGE: the counter has reached the column's maximum. */
const COUNTER_OVERFLOW_ERRNOS = new Set([1467, 1264]);

/** How long a backend found lacking a sequence (or disagreeing on it) is left before asking again. */
export const MEMBERSHIP_RECHECK_MS = 5000;

type Membership = { readonly kind: 'present' | 'absent' | 'conflict'; readonly checkedAt: number };

/** One backend with what the allocator knows about it. */
interface Slot {
  readonly backend: Backend;
  readonly health: BackendHealth;
  readonly membership: Map<string, Membership>;
  readonly exhausted: Set<string>;
  readonly lastTicket: Map<string, bigint>;
}

/** A backend's state as shown to operators. */
export interface BackendStatus {
  readonly backend: string;
  readonly state: HealthState;
  readonly stripe: { readonly increment: string; readonly offset: string } | undefined;
  readonly lastError: string | undefined;
}

/** Dependencies of the allocator. */
export interface AllocatorOptions {
  readonly backends: readonly BackendAddress[];
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly random?: Random;
  readonly backendOptions?: BackendOptions;
}

/** Fetches tickets round-robin over the backends and maps them to ranges. */
export class Allocator {
  readonly #slots: Slot[];
  readonly #stripes = new Map<string, Stripe>();
  readonly #marks = new HighWaterMarks();
  readonly #logger: Logger;
  readonly #clock: Clock;
  #cursor = 0;

  constructor(options: AllocatorOptions) {
    this.#logger = options.logger;
    this.#clock = options.clock ?? Date.now;
    const random = options.random ?? Math.random;
    const guard = (backend: Backend, session: SessionSettings): void => this.#checkSession(backend, session);
    this.#slots = options.backends.map((address) => ({
      backend: new Backend(address, guard, options.backendOptions ?? DEFAULT_BACKEND_OPTIONS),
      health: new BackendHealth(this.#clock, random),
      membership: new Map(),
      exhausted: new Set(),
      lastTicket: new Map(),
    }));
  }

  /** The backends, in configured order. */
  get backends(): readonly Backend[] {
    return this.#slots.map((s) => s.backend);
  }

  #checkSession(backend: Backend, session: SessionSettings): void {
    // Runs for every new connection, so a backend restarted without its option file is caught.
    const problem = stripeProblem(backend.label, session, this.#stripes, this.#slots.length);
    if (problem !== undefined) throw new BackendMisconfiguredError(problem);
    this.#stripes.set(backend.label, { increment: session.increment, offset: session.offset });
  }

  /** Connects to every backend once, pinning and checking their stripes. Returns the problems. */
  async probe(): Promise<{ backend: string; error: unknown }[]> {
    const failures: { backend: string; error: unknown }[] = [];
    await Promise.all(
      this.#slots.map(async (slot) => {
        try {
          await slot.backend.session();
          this.#recordSuccess(slot);
        } catch (error) {
          this.#recordFailure(slot, error);
          failures.push({ backend: slot.backend.label, error });
        }
      }),
    );
    return failures;
  }

  /** True when at least one backend is not known to be failing. */
  get anyBackendAvailable(): boolean {
    return this.#slots.some((s) => s.health.available && s.health.state !== 'down');
  }

  /** Fetches about `tickets` tickets for the sequence, spread over the available backends. */
  async fetchRanges(settings: SequenceSettings, tickets: number): Promise<IdRange[]> {
    for (let round = 0; round < 3; round++) {
      const result = await this.#fetchRound(settings, Math.max(1, tickets));
      if (result.ranges.length > 0) return result.ranges.sort((a, b) => (a.first < b.first ? -1 : 1));
      if (!result.retry) break;
    }
    throw this.#emptyHandedError(settings.name);
  }

  async #fetchRound(settings: SequenceSettings, tickets: number): Promise<{ ranges: IdRange[]; retry: boolean }> {
    const candidates = this.#rotate().filter((s) => s.health.available && !s.exhausted.has(settings.name));
    const shares = candidates.slice(0, tickets).map((slot, i) => ({
      slot,
      count: Math.floor(tickets / candidates.length) + (i < tickets % candidates.length ? 1 : 0),
    }));
    const results = await Promise.all(shares.map(({ slot, count }) => this.#fetchFrom(slot, settings, count)));
    return { ranges: results.flatMap((r) => r.ranges), retry: results.some((r) => r.retry) };
  }

  #rotate(): Slot[] {
    // Round-robin start, so that single-ticket refills alternate and the counters advance together.
    const start = this.#cursor++ % this.#slots.length;
    return [...this.#slots.slice(start), ...this.#slots.slice(0, start)];
  }

  async #fetchFrom(slot: Slot, settings: SequenceSettings, count: number): Promise<{ ranges: IdRange[]; retry: boolean }> {
    const name = settings.name;
    const ranges: IdRange[] = [];
    try {
      if (!(await this.#hasSequence(slot, settings))) return { ranges, retry: false };
    } catch (error) {
      this.#recordFailure(slot, error);
      return { ranges, retry: false };
    }
    const batch = await slot.backend.fetchTickets(name, count);
    const stripe = this.#stripes.get(slot.backend.label);
    let retry = false;
    for (const ticket of batch.tickets) {
      try {
        if (stripe === undefined) throw new BackendMisconfiguredError(`backend ${slot.backend.label} has no checked stripe`);
        this.#marks.accept(slot.backend.label, name, ticket, stripe);
      } catch (error) {
        this.#quarantine(slot, name, error);
        return { ranges, retry: true };
      }
      slot.lastTicket.set(name, ticket);
      const outcome = blockForTicket(ticket, settings);
      if (outcome.kind === 'range') {
        ranges.push(outcome.range);
        // Tickets only grow, so after the block that reaches maxId this backend has nothing left.
        if (outcome.range.last === settings.maxId) this.#markExhausted(slot, name, ticket);
      } else if (outcome.kind === 'exhausted') {
        this.#markExhausted(slot, name, ticket);
        break;
      } else if (!retry) {
        retry = true;
        // A counter behind startAfter (table created by hand): move it forward rather than burn tickets.
        await slot.backend.advanceCounter(name, firstUsefulTicket(settings)).catch((e: unknown) => this.#recordFailure(slot, e));
      }
    }
    if (batch.error === undefined) this.#recordSuccess(slot);
    else if (isCounterOverflow(batch.error)) this.#markExhausted(slot, name, slot.lastTicket.get(name));
    else this.#recordFailure(slot, batch.error);
    return { ranges, retry };
  }

  #markExhausted(slot: Slot, sequence: string, ticket: bigint | undefined): void {
    slot.exhausted.add(sequence);
    this.#logger.warn({ backend: slot.backend.label, sequence, ticket }, 'backend has no tickets left at or below maxId');
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

  #quarantine(slot: Slot, sequence: string, error: unknown): void {
    this.#logger.error(
      { backend: slot.backend.label, sequence, code: (error as { code?: string }).code, err: String(error) },
      'ticket refused: backend quarantined',
    );
    this.#recordFailure(slot, error);
  }

  #emptyHandedError(sequence: string): Error {
    const withSequence = this.#slots.filter((s) => s.membership.get(sequence)?.kind === 'present');
    if (withSequence.length > 0 && withSequence.every((s) => s.exhausted.has(sequence))) {
      return new SequenceExhaustedError(`sequence ${sequence} has no IDs left at or below its maxId`);
    }
    const reachable = this.#slots.filter((s) => s.health.state === 'up');
    if (reachable.length > 0 && reachable.every((s) => s.membership.get(sequence)?.kind === 'absent')) {
      return new SequenceNotFoundError(`sequence ${sequence} does not exist on any reachable backend`);
    }
    const retryInMs = Math.min(...this.#slots.map((s) => s.health.retryInMs));
    const last = this.#slots.map((s) => s.health.lastError).find((e) => e !== undefined);
    return new BackendsUnavailableError(
      `no backend issued a ticket for sequence ${sequence}${last === undefined ? '' : `: ${last}`}`,
      { retryAfterSeconds: Math.max(1, Math.ceil(retryInMs / 1000)) },
    );
  }

  #recordSuccess(slot: Slot): void {
    if (slot.health.recordSuccess()) this.#logger.info({ backend: slot.backend.label }, 'backend up');
  }

  #recordFailure(slot: Slot, error: unknown): void {
    if (error instanceof TicketRegressionError || error instanceof BackendMisconfiguredError) {
      this.#logger.error({ backend: slot.backend.label, code: error.code }, error.message);
    }
    if (slot.health.recordFailure(error)) {
      this.#logger.warn({ backend: slot.backend.label, err: slot.health.lastError }, 'backend down');
    }
  }

  /** Operator view of every backend. */
  status(): BackendStatus[] {
    return this.#slots.map((s) => {
      const stripe = this.#stripes.get(s.backend.label);
      return {
        backend: s.backend.label,
        state: s.health.state,
        stripe: stripe && { increment: String(stripe.increment), offset: String(stripe.offset) },
        lastError: s.health.lastError,
      };
    });
  }

  /** Per-backend view of one sequence: membership and the last ticket seen here. */
  sequenceStatus(name: string): { backend: string; state: HealthState; member: string; lastTicket: string | null; exhausted: boolean }[] {
    return this.#slots.map((s) => ({
      backend: s.backend.label,
      state: s.health.state,
      member: s.membership.get(name)?.kind ?? 'unknown',
      lastTicket: s.lastTicket.get(name)?.toString() ?? null,
      exhausted: s.exhausted.has(name),
    }));
  }

  /** Closes every backend pool. */
  async close(): Promise<void> {
    await Promise.all(this.#slots.map((s) => s.backend.close()));
  }
}

function isCounterOverflow(error: unknown): boolean {
  const errno = (error as { errno?: unknown } | null)?.errno;
  return typeof errno === 'number' && COUNTER_OVERFLOW_ERRNOS.has(errno);
}
