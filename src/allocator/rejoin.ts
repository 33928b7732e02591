/**
 * Checking a backend before use, and a backend whose counter went back: the I/O behind the lane's
 * steps 6 and 7 (core/lane.ts). Before a backend's tickets are used for a sequence (at first use,
 * after an outage, a broken connection or an idle spell) the claims its peers hold for its class
 * are read and its counter compared with them; the lane's step says what to advance, and when it
 * may serve.
 */
import { backendIndexOf, backendLetter } from '../backend/backend-address.js';
import type { TicketBackend } from '../backend/ticket-backend.js';
import { highestUsed } from '../core/claims.js';
import type { Refusal, RegressionPolicy } from '../core/counters.js';
import type { Effect, LaneEvent, Step } from '../core/lane.js';
import type { SequenceSettings } from '../core/sequence.js';
import type { Stripe } from '../core/stripes.js';
import { BackendsUnavailableError, UnknownBackendError } from '../core/errors.js';
import type { Logger } from '../logger.js';
import { failureOf } from './answers.js';
import { errorText } from '../util/error-text.js';
import { settleWithin } from '../util/settle-within.js';
import type { BackendHealth } from './backend-health.js';
import type { BackendSlot } from './backend-slot.js';
import { readClaimsEverywhere } from './claims.js';
import type { AllocatorEvents } from './events.js';

/** How long preparing a (re)joining backend waits for its peers' claims and counters. */
export const PREPARE_WAIT_MS = 300;

/** The allocator's state this needs; the allocator owns it. */
export interface RejoinContext {
  readonly slots: readonly BackendSlot[];
  readonly logger: Logger;
  readonly events: AllocatorEvents;
  readonly health: BackendHealth;
  readonly policy: RegressionPolicy;
}

/** What releasing a quarantined backend found and did. */
export interface ReleaseResult {
  readonly backend: string;
  readonly sequence: string;
  /** Whether it was quarantined for the sequence (a release of one that was not changes nothing but its mark). */
  readonly wasQuarantined: boolean;
  /** Why it was quarantined, or null when it was not. */
  readonly quarantineReason: string | null;
  /** The lowest ticket its counter could issue when it was checked. */
  readonly nextTicket: string;
  /** The highest ticket of its class claimed (or below a floor) on the peers, or null. */
  readonly highestUsed: string | null;
  /** The next ticket its counter was moved to, or null when it was already past every used ticket. */
  readonly advancedTo: string | null;
}

/** Checks backends for a sequence and carries out what their lanes ask after a regression. */
export class Rejoin {
  readonly #ctx: RejoinContext;

  constructor(ctx: RejoinContext) {
    this.#ctx = ctx;
  }

  /** Reads the peers' claims for the backend's class, then checks and catches up its counter. */
  async prepare(slot: BackendSlot, settings: SequenceSettings): Promise<void> {
    const name = settings.name;
    // A call on a checked connection: a new one (after a break) or one checked again (after an idle
    // spell) has its stripe, identity and durability checked by the allocator's guard first.
    await slot.backend.settings();
    const stripe = this.#stripe(slot);
    // A peer that hangs must not hold up the rejoin: what answers within PREPARE_WAIT_MS counts.
    const { classes } = await readClaimsEverywhere(this.#peersOf(slot), name, PREPARE_WAIT_MS);
    let own = await slot.backend.nextTicket(name);
    const read = this.#apply(slot, name, {
      kind: 'counter-read',
      next: own,
      peers: classes,
      stripe,
      policy: this.#ctx.policy,
    });
    if (slot.lane(name).phase === 'quarantined') return;
    own = (await this.perform(slot, name, read.effects)) ?? own;
    const counters = await settleWithin(
      this.#peersOf(slot).map((b) => b.nextTicket(name)),
      PREPARE_WAIT_MS,
    );
    const leader = counters.reduce((max, c) => (c > max ? c : max), 0n);
    await this.#catchUp(slot, name, this.#apply(slot, name, { kind: 'leader-read', own, leader, stripe }).effects);
    slot.apply(name, { kind: 'checked' });
  }

  /**
   * Moves a counter that fell behind its peers forward. Falling behind is a matter of order, not of
   * uniqueness (the claims guard every used ticket), so a catch-up that fails is logged and the
   * backend serves all the same: it never takes a backend out of service on its own.
   */
  async #catchUp(slot: BackendSlot, name: string, effects: readonly Effect[]): Promise<void> {
    try {
      await this.perform(slot, name, effects);
    } catch (error) {
      this.#ctx.logger.warn(
        { backend: slot.label, sequence: name, err: errorText(error) },
        'counter behind its peers could not be caught up; the backend serves behind them (claims keep its IDs unique)',
      );
    }
  }

  /** Handles a ticket refused by parity, the process mark or a claim. */
  async onRefused(slot: BackendSlot, settings: SequenceSettings, refusal: Refusal): Promise<void> {
    const name = settings.name;
    const result = this.#apply(slot, name, { kind: 'refused', refusal, policy: this.#ctx.policy });
    try {
      await this.perform(slot, name, result.effects);
    } catch (advanceError) {
      this.#ctx.health.recordFailure(slot, advanceError);
    }
  }

  /**
   * Re-checks a backend against the claims of every peer and lets it serve the sequence again:
   * a counter still below a used ticket is advanced past every used ticket first. Every peer must
   * answer, or nothing changes.
   */
  async release(given: string, settings: SequenceSettings): Promise<ReleaseResult> {
    const name = settings.name;
    // Its name (the URL's name=), its address, or a letter: its place in TICKETD_BACKENDS, as `ticketd dev` calls them.
    const index = backendIndexOf(given);
    const slot =
      this.#ctx.slots.find((s) => s.name === given || s.label === given) ??
      (index === undefined ? undefined : this.#ctx.slots[index]);
    if (slot === undefined) {
      const configured = this.#ctx.slots
        .map((s, i) => `${s.name === backendLetter(i) ? s.name : `${backendLetter(i)} (${s.name})`} = ${s.label}`)
        .join(', ');
      throw new UnknownBackendError(`backend ${given} is not configured; configured: ${configured}`);
    }
    try {
      return await this.#releaseSlot(slot, name);
    } catch (error) {
      // An operator's call reaches the backend even with its breaker open: what fails under it is
      // that backend not answering (a 503 naming it), not a fault of ticketd.
      throw failureOf({ backend: slot.label, ok: false, error });
    }
  }

  async #releaseSlot(slot: BackendSlot, name: string): Promise<ReleaseResult> {
    const label = slot.label;
    slot.backend.forgetVerifiedConnections();
    await slot.backend.settings();
    const stripe = this.#stripe(slot);
    const peers = this.#peersOf(slot, true);
    const { classes, answered } = await readClaimsEverywhere(peers, name);
    if (answered < peers.length) {
      throw new BackendsUnavailableError(
        `cannot release ${label} for ${name}: ${peers.length - answered} of its ${peers.length} peers did not answer with their claims`,
      );
    }
    const own = await slot.backend.nextTicket(name);
    const read = slot.apply(name, { kind: 'release-read', next: own, peers: classes, stripe });
    const advancedTo = await this.perform(slot, name, read.effects);
    // For the operator's answer only: the lane's step raised its mark from the same claims.
    const used = highestUsed(classes, stripe);
    const quarantineReason = slot.lane(name).quarantine ?? null;
    slot.apply(name, { kind: 'released', peers: classes, stripe });
    this.#ctx.logger.warn(
      { backend: label, sequence: name, nextTicket: own, highestUsed: used, advancedTo },
      'backend released for the sequence',
    );
    return {
      backend: label,
      sequence: name,
      wasQuarantined: quarantineReason !== null,
      quarantineReason,
      nextTicket: String(own),
      highestUsed: used === undefined ? null : String(used),
      advancedTo: advancedTo === undefined ? null : String(advancedTo),
    };
  }

  /** Applies an event to the lane and reports the regressions and quarantines it noted. */
  #apply(slot: BackendSlot, name: string, event: LaneEvent): Step {
    const result = slot.apply(name, event);
    for (const note of result.notes) {
      if (note.kind === 'wrong-class' || (note.kind === 'regressed' && note.outcome === 'quarantined')) {
        this.#ctx.events.regression(slot.label, name, 'quarantined');
        const what =
          note.kind === 'wrong-class'
            ? 'ticket refused: backend quarantined for this sequence'
            : 'counter at or below a ticket already used; backend quarantined for this sequence';
        this.#ctx.logger.error({ backend: slot.label, sequence: name, ticket: note.ticket, err: note.reason }, what);
      }
    }
    return result;
  }

  /** Carries out the advances a step asked for (reading the claims first where it asks); returns the last counter it advanced to. */
  async perform(slot: BackendSlot, name: string, effects: readonly Effect[]): Promise<bigint | undefined> {
    let advancedTo: bigint | undefined;
    for (const effect of effects) {
      if (effect.kind === 'read-used') {
        // Read afresh: the claims other processes made since are used tickets too.
        const { classes } = await readClaimsEverywhere(this.#peersOf(slot), name);
        const next = slot.apply(name, {
          kind: 'used-read',
          seen: effect.seen,
          peers: classes,
          stripe: this.#stripe(slot),
        });
        advancedTo = (await this.perform(slot, name, next.effects)) ?? advancedTo;
        continue;
      }
      if (effect.why === 'regressed') {
        this.#ctx.logger.error(
          { backend: slot.label, sequence: name, ticket: effect.from, used: effect.used, next: effect.to },
          'counter at or below a ticket already used; advancing it past every used ticket',
        );
      }
      await slot.backend.advanceCounter(name, effect.to);
      // Counted once the server took the advance: one it refused (a missing privilege) did not happen.
      if (effect.why === 'regressed') this.#ctx.events.regression(slot.label, name, 'advanced');
      if (effect.why === 'catch-up')
        this.#ctx.logger.info(
          { backend: slot.label, sequence: name, from: effect.from, to: effect.to },
          'counter caught up with the leader',
        );
      advancedTo = effect.to;
    }
    return advancedTo;
  }

  #stripe(slot: BackendSlot): Stripe {
    const stripe = slot.stripe;
    if (stripe === undefined) throw new BackendsUnavailableError(`backend ${slot.label} has no checked stripe yet`);
    return stripe;
  }

  /** The other backends: those whose breaker is closed, or all of them when `all`. */
  #peersOf(slot: BackendSlot, all = false): TicketBackend[] {
    return this.#ctx.slots.filter((s) => s !== slot && (all || s.closed)).map((s) => s.backend);
  }
}
