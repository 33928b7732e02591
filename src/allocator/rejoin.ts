/**
 * A backend (re)joining, and a backend whose counter went back: the I/O behind ticket-guard's
 * decisions. Before a backend's tickets are used for a sequence (at first use, after an outage, a
 * broken connection or an idle spell) the claims its peers hold for its class are read and its
 * counter compared with them; a counter found below a used ticket is advanced past every used
 * ticket known (or quarantined). A laggard is caught up with the leader.
 */
import type { ClassClaims, TicketBackend } from '../backend/ticket-backend.js';
import type { SequenceSettings } from '../core/sequence.js';
import type { Stripe } from '../core/ticket-math.js';
import { BackendsUnavailableError, UnknownBackendError } from '../errors.js';
import type { Logger } from '../logger.js';
import { settleWithin } from '../util/settle-within.js';
import type { BackendHealth } from './backend-health.js';
import { readClaimsEverywhere } from './claims.js';
import type { AllocatorEvents } from './events.js';
import type { Slot } from './slot.js';
import { catchUpTarget, highestUsed, isRegressed, regressionTarget, type HighWaterMarks, type RegressionPolicy, type Refusal } from './ticket-guard.js';

/** How long preparing a (re)joining backend waits for its peers' claims and counters. */
export const PREPARE_WAIT_MS = 300;

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

/** What releasing a quarantined backend found and did. */
export interface ReleaseResult {
  readonly backend: string;
  readonly sequence: string;
  /** The reason it was quarantined, or null when it was not. */
  readonly wasQuarantined: string | null;
  /** The lowest ticket its counter could issue when it was checked. */
  readonly nextTicket: string;
  /** The highest ticket of its class claimed (or below a floor) on the peers, or null. */
  readonly highestUsed: string | null;
  /** The next ticket its counter was moved to, or null when it was already past every used ticket. */
  readonly advancedTo: string | null;
}

/** Prepares backends for a sequence and handles regressed counters. */
export class Rejoin {
  readonly #ctx: RejoinContext;

  constructor(ctx: RejoinContext) {
    this.#ctx = ctx;
  }

  /** Reads the peers' claims for the backend's class, then checks and catches up its counter. */
  async prepare(slot: Slot, settings: SequenceSettings): Promise<void> {
    const name = settings.name;
    const label = slot.backend.label;
    // A call on a checked connection: a new one (after a break) or one checked again (after an idle
    // spell) has its stripe, identity and durability checked by the allocator's guard first.
    await slot.backend.settings();
    const stripe = this.#stripe(slot);
    // A peer that hangs must not hold up the rejoin: what answers within PREPARE_WAIT_MS counts.
    const { classes } = await readClaimsEverywhere(this.#peersOf(slot), name, PREPARE_WAIT_MS);
    const used = highestUsed(classes, stripe);
    if (used !== undefined) this.#ctx.marks.raise(label, name, used);
    let own = await slot.backend.nextTicket(name);
    if (isRegressed(own, used)) {
      const next = await this.#onRegression(slot, name, own, `counter at ${own}, at or below ticket ${used} already used (restored backup or promoted replica?)`, classes);
      if (next === undefined) return;
      own = next;
    }
    const counters = await settleWithin(this.#peersOf(slot).map((b) => b.nextTicket(name)), PREPARE_WAIT_MS);
    const leader = counters.reduce((max, c) => (c > max ? c : max), 0n);
    const target = catchUpTarget(own, leader, stripe);
    if (target !== undefined) {
      await slot.backend.advanceCounter(name, target);
      this.#ctx.logger.info({ backend: label, sequence: name, from: own, to: target }, 'counter caught up with the leader');
    }
    slot.prepared.add(name);
  }

  /** Handles a ticket refused by parity, the process mark or a claim; returns whether the refill should try again. */
  async onRefused(slot: Slot, settings: SequenceSettings, refusal: Refusal): Promise<boolean> {
    const name = settings.name;
    const label = slot.backend.label;
    if (!refusal.regressed) {
      // A ticket of the wrong residue class cannot be fixed by advancing the counter.
      slot.stats.regressions++;
      slot.quarantined.set(name, refusal.reason);
      this.#ctx.events.regression(label, name, 'quarantined');
      this.#ctx.logger.error({ backend: label, sequence: name, ticket: refusal.ticket, err: refusal.reason }, 'ticket refused: backend quarantined for this sequence');
      return true;
    }
    try {
      await this.#onRegression(slot, name, refusal.ticket, refusal.reason);
    } catch (advanceError) {
      this.#ctx.health.recordFailure(slot, advanceError);
    }
    return true;
  }

  /**
   * Re-checks a backend against the claims of every peer and lets it serve the sequence again:
   * a counter still below a used ticket is advanced past every used ticket first. Every peer must
   * answer, or nothing changes.
   */
  async release(label: string, settings: SequenceSettings): Promise<ReleaseResult> {
    const name = settings.name;
    const slot = this.#ctx.slots.find((s) => s.backend.label === label);
    if (slot === undefined) {
      throw new UnknownBackendError(`backend ${label} is not configured; configured: ${this.#ctx.slots.map((s) => s.backend.label).join(', ')}`);
    }
    slot.backend.forgetVerifiedConnections();
    await slot.backend.settings();
    const stripe = this.#stripe(slot);
    const peers = this.#peersOf(slot, true);
    const { classes, answered } = await readClaimsEverywhere(peers, name);
    if (answered < peers.length) {
      throw new BackendsUnavailableError(`cannot release ${label} for ${name}: ${peers.length - answered} of its ${peers.length} peers did not answer with their claims`);
    }
    const used = highestUsed(classes, stripe);
    const own = await slot.backend.nextTicket(name);
    let advancedTo: bigint | undefined;
    if (isRegressed(own, used)) {
      advancedTo = regressionTarget([used, this.#ctx.marks.get(label, name), own], stripe);
      await slot.backend.advanceCounter(name, advancedTo);
    }
    if (used !== undefined) this.#ctx.marks.raise(label, name, used);
    const wasQuarantined = slot.quarantined.get(name) ?? null;
    slot.quarantined.delete(name);
    slot.prepared.delete(name);
    this.#ctx.logger.warn({ backend: label, sequence: name, nextTicket: own, highestUsed: used, advancedTo }, 'backend released for the sequence');
    return {
      backend: label,
      sequence: name,
      wasQuarantined,
      nextTicket: String(own),
      highestUsed: used === undefined ? null : String(used),
      advancedTo: advancedTo === undefined ? null : String(advancedTo),
    };
  }

  /**
   * A counter found at or below a ticket already used: quarantined for the sequence, or (the
   * default) advanced past every used ticket known. Returns the next ticket, or undefined if
   * quarantined.
   */
  async #onRegression(slot: Slot, name: string, seen: bigint, reason: string, known?: ClassClaims[]): Promise<bigint | undefined> {
    const label = slot.backend.label;
    slot.stats.regressions++;
    this.#ctx.events.regression(label, name, this.#ctx.policy === 'quarantine' ? 'quarantined' : 'advanced');
    if (this.#ctx.policy === 'quarantine') {
      slot.quarantined.set(name, reason);
      this.#ctx.logger.error({ backend: label, sequence: name, ticket: seen, err: reason }, 'counter at or below a ticket already used; backend quarantined for this sequence');
      return undefined;
    }
    const stripe = this.#stripe(slot);
    // Read afresh (unless just read): the claims other processes made since are used tickets too.
    const classes = known ?? (await readClaimsEverywhere(this.#peersOf(slot), name)).classes;
    const used = highestUsed(classes, stripe);
    const next = regressionTarget([used, this.#ctx.marks.get(label, name), seen], stripe);
    this.#ctx.logger.error({ backend: label, sequence: name, ticket: seen, used, next, err: reason }, 'counter at or below a ticket already used; advancing it past every used ticket');
    await slot.backend.advanceCounter(name, next);
    return next;
  }

  #stripe(slot: Slot): Stripe {
    const stripe = this.#ctx.stripes.get(slot.backend.label);
    if (stripe === undefined) throw new BackendsUnavailableError(`backend ${slot.backend.label} has no checked stripe yet`);
    return stripe;
  }

  /** The other backends: those whose breaker is closed, or all of them when `all`. */
  #peersOf(slot: Slot, all = false): TicketBackend[] {
    return this.#ctx.slots.filter((s) => s !== slot && (all || s.breaker.closed)).map((s) => s.backend);
  }
}
