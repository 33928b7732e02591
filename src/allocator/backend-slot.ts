/**
 * One backend as the allocator holds it: its breaker, its lanes (one per sequence, core/lane.ts)
 * and what operators see of it. Every field is private: lanes change only through `apply`, which
 * runs the core's `step`, and the breaker only through the outcome methods.
 */
import type { TicketBackend, Transport } from '../backend/ticket-backend.js';
import { NEW_LANE, step, type Lane, type LaneEvent, type Step } from '../core/lane.js';
import { isWithin, type ServerSettings, type Stripe } from '../core/stripes.js';
import { refusesBackend } from '../core/errors.js';
import type { Breaker, BreakerState } from './breaker.js';
import type { GrantRefusals } from './refusal.js';

/** Whether a backend has a sequence (with the same settings), and when that was last asked. */
export type Membership = { readonly kind: 'present' | 'absent' | 'conflict'; readonly checkedAt: number };

/** Counters per backend, for operators: tickets, fetches and regressions over the sequences asked for. */
export interface BackendStats {
  readonly tickets: number;
  readonly fetches: number;
  readonly failures: number;
  readonly regressions: number;
}

/** A backend's state as shown: its breaker's, or `refused` while it refuses what its account may not do. */
export type ShownState = BreakerState | 'refused';

/** A backend's state as shown to operators. */
export interface BackendStatus {
  /** Its label, `mysql://host:port/db`: for the admin. */
  readonly backend: string;
  /** What everyone calls it (backendName: the URL's `name`, else its letter). */
  readonly name: string;
  readonly state: ShownState;
  readonly identity: string | undefined;
  readonly stripe: { readonly increment: string; readonly offset: string } | undefined;
  readonly lastError: string | undefined;
  /** When lastError happened (ISO 8601), or undefined with it. */
  readonly lastErrorAt: string | undefined;
  /** True while lastError is still happening: the backend is failing (down, open, probing) or refusing; false once it answers again. */
  readonly failing: boolean;
  readonly stats: BackendStats;
  /** How its newest connection travels (TLS version and cipher, or plaintext); undefined before one. */
  readonly transport: Transport | undefined;
}

/** A backend's state for one sequence. */
export interface BackendSequenceStatus {
  readonly backend: string;
  readonly name: string;
  readonly state: ShownState;
  readonly member: string;
  readonly lastTicket: string | null;
  readonly lastError: string | null;
  readonly exhausted: boolean;
  readonly quarantined: string | null;
  /** True while its tickets for the sequence find no peer to claim them (served or refused per TICKETD_CLAIMS). */
  readonly unclaimed: boolean;
}

/** A backend, its breaker and its lanes. */
export class BackendSlot {
  readonly backend: TicketBackend;
  readonly #breaker: Breaker;
  readonly #refusal: GrantRefusals;
  readonly #lanes = new Map<string, Lane>();
  readonly #membership = new Map<string, Membership>();
  /** Per sequence: an opaque sequence's counts are shown to the admin only (http/visibility.ts). */
  readonly #counts = new Map<string, { tickets: number; fetches: number; regressions: number }>();
  #failures = 0;
  #identity: string | undefined;
  #stripe: Stripe | undefined;
  #warned = false;
  #probeTimer: NodeJS.Timeout | undefined;
  #probeDueAt = Number.POSITIVE_INFINITY;
  #lastDemandProbeAt = Number.NEGATIVE_INFINITY;
  #lastUsedAt = Number.NEGATIVE_INFINITY;
  #lastTicketsAt = Number.NEGATIVE_INFINITY;

  /** What everyone calls it (backendName). */
  readonly name: string;

  constructor(backend: TicketBackend, breaker: Breaker, refusal: GrantRefusals, name = 'A') {
    this.backend = backend;
    this.name = name;
    this.#breaker = breaker;
    this.#refusal = refusal;
  }

  get label(): string {
    return this.backend.label;
  }

  /** The lane of a sequence (a new one when none is known). */
  lane(sequence: string): Lane {
    return this.#lanes.get(sequence) ?? NEW_LANE;
  }

  /** Runs the core's step on the sequence's lane and keeps the new state. */
  apply(sequence: string, event: LaneEvent): Step {
    const result = step(this.lane(sequence), event);
    this.#lanes.set(sequence, result.lane);
    const counts = this.#countsOf(sequence);
    counts.tickets += result.accepted.length;
    for (const note of result.notes) if (note.kind === 'regressed' || note.kind === 'wrong-class') counts.regressions++;
    return result;
  }

  #countsOf(sequence: string): { tickets: number; fetches: number; regressions: number } {
    let counts = this.#counts.get(sequence);
    if (counts === undefined) {
      counts = { tickets: 0, fetches: 0, regressions: 0 };
      this.#counts.set(sequence, counts);
    }
    return counts;
  }

  /** Every lane must be checked again before its next tickets are used. */
  #allStale(): void {
    for (const sequence of this.#lanes.keys()) this.apply(sequence, { kind: 'stale' });
  }

  get stripe(): Stripe | undefined {
    return this.#stripe;
  }

  get identity(): string | undefined {
    return this.#identity;
  }

  /**
   * Keeps what a checked connection reported. Another identity behind the address makes every
   * lane stale. Returns true the first time there are warnings to log.
   */
  noteConnection(settings: ServerSettings, identityChanged: boolean, hasWarnings: boolean): boolean {
    if (identityChanged) this.#allStale();
    this.#identity = settings.identity;
    const stripe = { increment: settings.increment, offset: settings.offset };
    // Re-striped into a narrower class (the guard allowed it): the pin stays the wider class until a
    // restart, since this process's older sessions may still issue tickets anywhere in it.
    if (identityChanged || this.#stripe === undefined || !isWithin(stripe, this.#stripe)) this.#stripe = stripe;
    const warnNow = hasWarnings && !this.#warned;
    if (warnNow) this.#warned = true;
    return warnNow;
  }

  /** Tickets of the sequence were asked for now; `got` when some came back. */
  noteFetch(sequence: string, now: number, got = true): void {
    this.#lastUsedAt = now;
    if (got) this.#lastTicketsAt = now;
    this.#countsOf(sequence).fetches++;
  }

  /** When tickets were last fetched: after an idle spell nothing known of it is trusted. */
  get lastUsedAt(): number {
    return this.#lastUsedAt;
  }

  /** Idle too long (core's mustRecheck): every lane is checked again. */
  forgetAfterIdle(): void {
    this.backend.forgetVerifiedConnections();
    this.#allStale();
  }

  membership(sequence: string): Membership | undefined {
    return this.#membership.get(sequence);
  }

  setMembership(sequence: string, membership: Membership): void {
    this.#membership.set(sequence, membership);
  }

  get state(): BreakerState {
    return this.#breaker.state;
  }

  get closed(): boolean {
    return this.#breaker.closed;
  }

  get lastError(): string | undefined {
    return this.#refusal.reason ?? this.#breaker.lastError;
  }

  /** The state shown to operators: an outage first (open, probing), then a refusal, then the breaker's. */
  get shownState(): ShownState {
    const state = this.#breaker.state;
    return state !== 'open' && state !== 'half-open' && this.#refusal.active ? 'refused' : state;
  }

  /**
   * The server refused a statement for want of a privilege. Its breaker is left alone: it answered,
   * and every other call may well succeed. True when worth a log line (a new episode or reason).
   */
  recordRefusal(reason: string): boolean {
    return this.#refusal.note(reason);
  }

  /** True while it is shown refused (a refusal within REFUSAL_HOLD_MS). */
  get refused(): boolean {
    return this.#refusal.active;
  }

  /** Its account was asked again: still refused (shown so for REFUSAL_HOLD_MS more), or refused nothing now. */
  noteRefusalRecheck(stillRefused: boolean): void {
    if (stillRefused) this.#refusal.renew();
    else this.#refusal.clear();
  }

  /** True when an ID could come from it now: closed, and not refused at every fetch since its refusals began. */
  get issuing(): boolean {
    return (this.state === 'up' || this.state === 'unknown') && !this.#refusal.blocksIssuing(this.#lastTicketsAt);
  }

  get probeInMs(): number {
    return this.#breaker.probeInMs;
  }

  /** A call succeeded; returns the breaker's previous state. */
  recordSuccess(): BreakerState {
    return this.#breaker.recordSuccess();
  }

  /**
   * A call failed: whatever failed, the server behind the address may not be the one it was, so
   * every lane is stale. A misconfiguration opens the breaker at once. Returns the previous state.
   */
  recordFailure(error: unknown): BreakerState {
    this.#failures++;
    this.#allStale();
    const previous = this.#breaker.state;
    if (refusesBackend(error)) this.#breaker.trip(error);
    else this.#breaker.recordFailure(error);
    return previous;
  }

  /** Starts a probe if one is due (or forced); false when none may start. */
  beginProbe(force: boolean): boolean {
    return this.#breaker.beginProbe(force);
  }

  /**
   * Sets the probe timer; `run` is called when it fires (when the breaker's probe is due, or after
   * `inMs`). A timer already set that fires no later is kept; a later one (a recheck of a 'down'
   * backend whose breaker has opened since) gives way to this one.
   */
  scheduleProbe(run: () => void, inMs = this.#breaker.probeInMs + 1): void {
    const dueAt = Date.now() + inMs;
    if (this.#probeTimer !== undefined) {
      if (this.#probeDueAt <= dueAt) return;
      clearTimeout(this.#probeTimer);
    }
    this.#probeDueAt = dueAt;
    this.#probeTimer = setTimeout(() => {
      this.#probeTimer = undefined;
      run();
    }, inMs);
    this.#probeTimer.unref();
  }

  cancelProbe(): void {
    clearTimeout(this.#probeTimer);
  }

  /** True (and noted) when a demand probe may run now: at most one per `intervalMs`. */
  takeDemandProbe(now: number, intervalMs: number): boolean {
    if (now - this.#lastDemandProbeAt < intervalMs) return false;
    this.#lastDemandProbeAt = now;
    return true;
  }

  /** The operator view of the backend; its counts add up the sequences `counted` admits (default: all). */
  status(counted: (sequence: string) => boolean = () => true): BackendStatus {
    const stripe = this.#stripe;
    // The time of the error shown: a refusal's own while it is shown, the breaker's otherwise.
    const lastErrorAt = this.#refusal.lastAt ?? this.#breaker.lastErrorAt;
    const stats = { tickets: 0, fetches: 0, failures: this.#failures, regressions: 0 };
    for (const [sequence, counts] of this.#counts) {
      if (!counted(sequence)) continue;
      stats.tickets += counts.tickets;
      stats.fetches += counts.fetches;
      stats.regressions += counts.regressions;
    }
    return {
      backend: this.label,
      name: this.name,
      state: this.shownState,
      identity: this.#identity,
      stripe: stripe && { increment: String(stripe.increment), offset: String(stripe.offset) },
      lastError: this.lastError,
      lastErrorAt: lastErrorAt === undefined ? undefined : new Date(lastErrorAt).toISOString(),
      failing: this.shownState !== 'up' && this.shownState !== 'unknown',
      stats,
      transport: this.backend.transport,
    };
  }

  /** The operator view of the backend for one sequence. */
  sequenceStatus(name: string): BackendSequenceStatus {
    const lane = this.lane(name);
    return {
      backend: this.label,
      name: this.name,
      state: this.shownState,
      member: this.#membership.get(name)?.kind ?? 'unknown',
      lastTicket: lane.lastTicket?.toString() ?? null,
      lastError: this.lastError ?? null,
      exhausted: lane.phase === 'exhausted',
      quarantined: lane.quarantine ?? null,
      unclaimed: lane.unclaimed,
    };
  }
}
