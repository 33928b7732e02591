/**
 * One refill: tickets from the usable backends in rounds, each backend's run in chunks whose
 * tickets pass their lane's steps (core/lane.ts: parity and mark, then a claim on a peer) before
 * their blocks are served. A refill never waits long on a slow backend.
 */
import pRetry from 'p-retry';
import type { IdRange } from '../core/blocks.js';
import { mustRecheck, needsCheck, usable } from '../core/lane.js';
import { sameButMaxId, type SequenceSettings } from '../core/sequence.js';
import {
  BackendMisconfiguredError,
  BackendsUnavailableError,
  CounterOverflowError,
  SequenceRetiredError,
} from '../core/errors.js';
import type { Logger } from '../logger.js';
import type { BackendHealth } from './backend-health.js';
import type { BackendSlot } from './backend-slot.js';
import { emptyHandedError } from './empty-handed.js';
import type { Clock } from '../core/clock.js';
import type { Claimer } from './claims.js';
import type { AllocatorEvents } from './events.js';
import { runRound, type RoundResult } from './refill-round.js';
import type { Rejoin } from './rejoin.js';

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

/** The allocator's parts a refill uses; the allocator owns them. */
export interface RefillContext {
  readonly slots: readonly BackendSlot[];
  readonly health: BackendHealth;
  readonly claimer: Claimer;
  readonly rejoin: Rejoin;
  readonly events: AllocatorEvents;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly idleRevalidateMs: number;
}

/** Fetches ranges round-robin over the backends. */
export class Refill {
  readonly #ctx: RefillContext;
  #cursor = 0;

  constructor(ctx: RefillContext) {
    this.#ctx = ctx;
  }

  /**
   * Fetches about `tickets` tickets' worth of ranges, spread over the closed backends in rounds
   * (refill-round.ts): a round returns STRAGGLER_GRACE_MS after the first chunk of blocks arrived,
   * and the rest go to `onLate`. Retries (p-retry) only when a round got nothing and another may.
   */
  async fetchRanges(
    settings: SequenceSettings,
    tickets: number,
    onLate: (ranges: IdRange[]) => void = () => undefined,
  ): Promise<IdRange[]> {
    const started = this.#ctx.clock();
    const trace: string[] = [];
    return pRetry(
      async () => {
        await this.#ctx.health.probeIfNoneClosed(this.#ctx.slots, (s) => usable(s.lane(settings.name)));
        const { ranges, retry } = await this.#fetchRound(settings, Math.max(1, tickets), onLate, trace);
        if (ranges.length > 0) return ranges.sort((a, b) => (a.first < b.first ? -1 : 1));
        const error = emptyHandedError(this.#ctx.slots, settings.name);
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
        const ms = this.#ctx.clock() - started;
        // What each lane did, for the operator who sees requests wait on a refill.
        if (ms > SLOW_REFILL_MS)
          this.#ctx.logger.warn({ sequence: settings.name, ms, tickets, lanes: trace.join(' ') }, 'slow refill');
      });
  }

  #fetchRound(
    settings: SequenceSettings,
    tickets: number,
    onLate: (ranges: IdRange[]) => void,
    trace: string[],
  ): Promise<RoundResult> {
    const name = settings.name;
    const rotated = this.#rotate();
    const candidates = rotated.filter((s) => s.closed && usable(s.lane(name)));
    const inTurn = rotated[0]!;
    // The backend whose turn it was is out (open, quarantined): its share goes to the others.
    if (candidates.length > 0 && !candidates.includes(inTurn) && inTurn.lane(name).phase !== 'exhausted')
      this.#ctx.events.failover(name, inTurn.label);
    const perLane = (i: number): number =>
      Math.floor(tickets / candidates.length) + (i < tickets % candidates.length ? 1 : 0);
    const lanes = candidates.slice(0, tickets).map((slot, i) => ({ slot, count: perLane(i) }));
    const spares = candidates.slice(lanes.length);
    trace.push('|');
    const started = new Map<BackendSlot, number>();
    return runRound({
      lanes,
      spares,
      run: (slot, count, deliver) => {
        started.set(slot, this.#ctx.clock());
        return this.#fetchFrom(slot, settings, count, deliver).then(
          (result) => {
            if (result.retry) this.#ctx.events.failover(name, slot.backend.label);
            return result;
          },
          (error: unknown) => {
            this.#ctx.events.failover(name, slot.backend.label);
            this.#ctx.logger.error({ backend: slot.backend.label, err: String(error) }, 'refill lane failed');
            return { retry: true };
          },
        );
      },
      onLate,
      graceMs: STRAGGLER_GRACE_MS,
      hedgeMs: HEDGE_AFTER_MS,
      onLaneEnd: (slot, count, late) => {
        trace.push(
          `${slot.backend.label}:${count}t:${this.#ctx.clock() - (started.get(slot) ?? 0)}ms${late ? ':late' : ''}`,
        );
      },
    });
  }

  #rotate(): BackendSlot[] {
    // Round-robin start, so that single-ticket refills alternate and the counters advance together.
    const start = this.#cursor++ % this.#ctx.slots.length;
    return [...this.#ctx.slots.slice(start), ...this.#ctx.slots.slice(0, start)];
  }

  /**
   * One backend's part of a refill, in chunks of at most LANE_CHUNK_TICKETS: each chunk's tickets
   * are checked and claimed, then their blocks passed to `deliver`, so that a long run on one
   * backend does not keep waiting requests from the first blocks. Never rejects.
   */
  async #fetchFrom(
    slot: BackendSlot,
    settings: SequenceSettings,
    count: number,
    deliver: (ranges: IdRange[]) => void,
  ): Promise<{ retry: boolean }> {
    const name = settings.name;
    // Idle for a while: the server behind the address may not be the one this process knew.
    if (mustRecheck(slot.lastUsedAt, this.#ctx.clock(), this.#ctx.idleRevalidateMs)) slot.forgetAfterIdle();
    if (!this.#ctx.claimer.canServe(slot, name)) return { retry: false };
    try {
      if (!(await this.#hasSequence(slot, settings))) return { retry: false };
      if (needsCheck(slot.lane(name))) await this.#ctx.rejoin.prepare(slot, settings);
      if (slot.lane(name).phase === 'quarantined') return { retry: true };
    } catch (error) {
      this.#ctx.health.recordFailure(slot, error);
      return { retry: true };
    }
    for (let left = count; left > 0;) {
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
  async #fetchChunk(
    slot: BackendSlot,
    settings: SequenceSettings,
    count: number,
  ): Promise<{ ranges: IdRange[]; retry: boolean; stop: boolean }> {
    const name = settings.name;
    const label = slot.label;
    const started = this.#ctx.clock();
    const batch = await slot.backend.fetchTickets(name, count);
    slot.noteFetch(name, this.#ctx.clock(), batch.tickets.length > 0);
    this.#ctx.events.ticketFetch(
      label,
      name,
      (slot.lastUsedAt - started) / 1000,
      batch.tickets.length,
      batch.error !== undefined,
    );
    const stripe = slot.stripe;
    if (stripe === undefined) {
      this.#ctx.health.recordFailure(slot, new BackendMisconfiguredError(`backend ${label} has no checked stripe`));
      return { ranges: [], retry: true, stop: true };
    }
    const fetched = slot.apply(name, { kind: 'tickets', tickets: batch.tickets, stripe, where: `backend ${label}` });
    let ranges: IdRange[] = [];
    let stop = false;
    let retry = false;
    if (fetched.accepted.length > 0) {
      const claimed = await this.#ctx.claimer.claim(slot, settings, stripe, fetched.accepted);
      if (claimed.refusal !== undefined) await this.#ctx.rejoin.onRefused(slot, settings, claimed.refusal);
      if (claimed.withheld) return { ranges: [], retry: true, stop: true };
      ranges = [...claimed.serve];
      stop = claimed.stop;
      // Stopped short of exhaustion: a counter below startAfter, moved forward now.
      retry = claimed.stop && slot.lane(name).phase !== 'exhausted';
      if (claimed.effects.length > 0)
        await this.#ctx.rejoin
          .perform(slot, name, claimed.effects)
          .catch((e: unknown) => this.#ctx.health.recordFailure(slot, e));
      for (const note of claimed.notes) if (note.kind === 'exhausted') this.#logExhausted(slot, name, note.ticket);
    }
    if (fetched.refusal !== undefined) {
      await this.#ctx.rejoin.onRefused(slot, settings, fetched.refusal);
      return { ranges, retry: true, stop: true };
    }
    if (batch.error === undefined) {
      this.#ctx.health.recordSuccess(slot);
    } else if (batch.error instanceof CounterOverflowError || batch.error instanceof SequenceRetiredError) {
      // The sequence's own end, not the backend's fault: its breaker stays closed for the others.
      const last = fetched.accepted[fetched.accepted.length - 1];
      slot.apply(name, { kind: 'overflow', ticket: last });
      if (batch.error instanceof CounterOverflowError) this.#logExhausted(slot, name, last);
      stop = true;
    } else {
      this.#ctx.health.recordFailure(slot, batch.error);
      return { ranges, retry: true, stop: true };
    }
    return { ranges, retry, stop };
  }

  async #hasSequence(slot: BackendSlot, settings: SequenceSettings): Promise<boolean> {
    const known = slot.membership(settings.name);
    if (known?.kind === 'present') return true;
    if (known !== undefined && this.#ctx.clock() - known.checkedAt < MEMBERSHIP_RECHECK_MS) return false;
    const row = await slot.backend.readSequence(settings.name);
    // A row that differs only by maxId is the same sequence, widened here or not yet (core/widening.ts).
    const kind = row === undefined ? 'absent' : sameButMaxId(row, settings) ? 'present' : 'conflict';
    slot.setMembership(settings.name, { kind, checkedAt: this.#ctx.clock() });
    if (kind === 'conflict') {
      this.#ctx.logger.error(
        { backend: slot.backend.label, sequence: settings.name },
        'backend has the sequence with other settings; not used for it until fixed (ticketd check reports it)',
      );
    }
    return kind === 'present';
  }

  #logExhausted(slot: BackendSlot, sequence: string, ticket: bigint | undefined): void {
    this.#ctx.logger.warn({ backend: slot.label, sequence, ticket }, 'backend has no tickets left at or below maxId');
  }
}

/** Marks a round that found nothing but may find something on a retry. */
class RetryRound extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}
