/**
 * A backend (re)joining, and a backend whose counter went back. Before a backend's tickets are used
 * for a sequence (at first use, and after every outage) its stored high-water marks are loaded and
 * its counter compared with them; a counter found at or below a ticket already used is advanced
 * past every stored mark (or quarantined). A laggard is caught up with the leader.
 */
import type { Backend } from '../backend/backend.js';
import type { SequenceSettings } from '../core/sequence.js';
import { ownsTicket, type HighWaterMarks, type Stripe } from '../core/ticket-math.js';
import { BackendsUnavailableError } from '../errors.js';
import type { Logger } from '../logger.js';
import { settleWithin } from '../util/settle-within.js';
import type { BackendHealth } from './backend-health.js';
import type { AllocatorEvents } from './events.js';
import { highestOverlapping, readMarksEverywhere } from './mark-store.js';
import type { Slot } from './slot.js';

/** What to do with a backend whose counter is at or below a ticket already used. */
export type RegressionPolicy = 'advance' | 'quarantine';

/** How long preparing a (re)joining backend waits for its peers' marks and counters. */
export const PREPARE_WAIT_MS = 300;
/**
 * How far past the highest stored mark a regressed counter is advanced. Other processes may hold
 * tickets they fetched before the regression and are still storing (at most a chunk or two each);
 * the gap covers those of up to a few hundred processes. It is only spent when a counter went back.
 */
export const REGRESSION_GAP_TICKETS = 4096n;
/** A returning backend whose counter trails the leader's by more tickets than this is advanced. */
export const CATCH_UP_MIN_LAG_TICKETS = 64n;

/** The allocator's state this needs; the allocator owns it. */
export interface RejoinContext {
  readonly slots: readonly Slot[];
  readonly stripes: ReadonlyMap<string, Stripe>;
  readonly marks: HighWaterMarks;
  readonly logger: Logger;
  readonly events: AllocatorEvents;
  readonly health: BackendHealth;
  readonly policy: RegressionPolicy;
}

/** Prepares backends for a sequence and handles regressed counters. */
export class Rejoin {
  readonly #ctx: RejoinContext;

  constructor(ctx: RejoinContext) {
    this.#ctx = ctx;
  }

  /** Loads stored marks for the backend's residue class, then catches its counter up to the leader. */
  async prepare(slot: Slot, settings: SequenceSettings): Promise<void> {
    const name = settings.name;
    const label = slot.backend.label;
    const stripe = this.#ctx.stripes.get(label);
    if (stripe === undefined) await slot.backend.settings();
    const pinned = this.#ctx.stripes.get(label)!;
    // A peer that hangs must not hold up the rejoin: what answers within PREPARE_WAIT_MS counts.
    const { marks } = await readMarksEverywhere(this.#closedBackends(), name, PREPARE_WAIT_MS);
    const stored = highestOverlapping(marks, pinned);
    if (stored !== undefined) this.#ctx.marks.raise(label, name, stored);
    let own = await slot.backend.lastTicket(name);
    if (own === 0n) {
      // An empty ticket table tells nothing of its counter (a new sequence sits at its startAfter,
      // a table recreated by a restore at 1): its first ticket meets the raised mark instead.
      slot.prepared.add(name);
      return;
    }
    const mark = this.#ctx.marks.get(label, name);
    if (mark !== undefined && own < mark) {
      // Its last ticket is below one already used: a restored backup, or a re-initialised server.
      const floor = await this.#onRegression(slot, name, own, `counter at ${own}, below ticket ${mark} already used (restored backup?)`);
      if (floor === undefined) return;
      own = floor;
    }
    const others = this.#ctx.slots.filter((s) => s !== slot && s.breaker.closed);
    const counters = await settleWithin(others.map((s) => s.backend.lastTicket(name)), PREPARE_WAIT_MS);
    const leader = counters.reduce((max, c) => (c > max ? c : max), 0n);
    if (leader > own + CATCH_UP_MIN_LAG_TICKETS * pinned.increment) {
      // Keeps IDs roughly time-ordered after an outage; ALTER never lowers and keeps parity.
      await slot.backend.advanceCounter(name, leader + 1n);
      this.#ctx.logger.info({ backend: label, sequence: name, from: own, to: leader }, 'counter caught up with the leader');
    }
    slot.prepared.add(name);
  }

  /** Handles a refused ticket; returns whether the refill should try again. */
  async onRefusedTicket(slot: Slot, settings: SequenceSettings, ticket: bigint, error: unknown): Promise<boolean> {
    const name = settings.name;
    const label = slot.backend.label;
    const stripe = this.#ctx.stripes.get(label);
    const reason = error instanceof Error ? error.message : String(error);
    // Only a counter that went back can be advanced past the mark; a ticket of the wrong residue cannot.
    if (stripe === undefined || !ownsTicket(ticket, stripe) || this.#ctx.marks.get(label, name) === undefined) {
      slot.stats.regressions++;
      slot.quarantined.set(name, reason);
      this.#ctx.events.regression(label, name, 'quarantined');
      this.#ctx.logger.error({ backend: label, sequence: name, ticket, err: reason }, 'ticket refused: backend quarantined for this sequence');
      return true;
    }
    try {
      await this.#onRegression(slot, name, ticket, reason);
    } catch (advanceError) {
      this.#ctx.health.recordFailure(slot, advanceError);
    }
    return true;
  }

  /**
   * A counter found at or below a ticket already used: quarantined for the sequence, or (the
   * default) advanced past the highest mark any process stored plus REGRESSION_GAP_TICKETS. This
   * process's own mark only covers its own tickets; other processes took tickets from this backend
   * too, and some may still be storing theirs. Returns the new floor, or undefined if quarantined.
   */
  async #onRegression(slot: Slot, name: string, seen: bigint, reason: string): Promise<bigint | undefined> {
    const label = slot.backend.label;
    slot.stats.regressions++;
    this.#ctx.events.regression(label, name, this.#ctx.policy === 'quarantine' ? 'quarantined' : 'advanced');
    if (this.#ctx.policy === 'quarantine') {
      slot.quarantined.set(name, reason);
      this.#ctx.logger.error({ backend: label, sequence: name, ticket: seen, err: reason }, 'counter at or below a ticket already used (restored backup?); backend quarantined for this sequence');
      return undefined;
    }
    const mark = await this.#globalMark(slot, name);
    const floor = mark + REGRESSION_GAP_TICKETS * this.#ctx.stripes.get(label)!.increment;
    this.#ctx.logger.error({ backend: label, sequence: name, ticket: seen, mark, err: reason }, 'counter at or below a ticket already used (restored backup?); advancing it past the mark');
    await slot.backend.advanceCounter(name, floor + 1n);
    return floor;
  }

  #closedBackends(): Backend[] {
    return this.#ctx.slots.filter((s) => s.breaker.closed).map((s) => s.backend);
  }

  /** Raises this process's mark for the backend to the highest stored mark, and returns it. */
  async #globalMark(slot: Slot, sequence: string): Promise<bigint> {
    const label = slot.backend.label;
    const stripe = this.#ctx.stripes.get(label);
    const { marks, answered } = await readMarksEverywhere(this.#closedBackends(), sequence);
    const stored = stripe === undefined ? undefined : highestOverlapping(marks, stripe);
    if (stored !== undefined) this.#ctx.marks.raise(label, sequence, stored);
    const mark = this.#ctx.marks.get(label, sequence);
    if (mark === undefined || (answered === 0 && this.#ctx.slots.length > 1)) {
      throw new BackendsUnavailableError(`no backend answered while reading the marks of ${label} for ${sequence}`);
    }
    return mark;
  }
}
