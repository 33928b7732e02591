/**
 * Turns tickets from the backends into ID ranges. Every ticket passes its lane's steps (parity,
 * the process mark, then a claim on a peer) before its block is used. Backends sit behind circuit
 * breakers; a refill never waits long on a slow one.
 */
import { Backend, type ConnectionGuard } from '../backend/mysql/backend.js';
import { DEFAULT_BACKEND_OPTIONS } from '../backend/backend-options.js';
import type { Inspection, SchemaApplied, TicketBackend } from '../backend/ticket-backend.js';
import type { WorkerLeaseStore } from '../backend/worker-lease-store.js';
import type { StrictStore } from '../backend/strict-store.js';
import type { IdRange } from '../core/blocks.js';
import type { SequenceSettings } from '../core/sequence.js';
import type { ServerSettings } from '../core/stripes.js';
import { refusesBackend } from '../core/errors.js';
import type { Logger } from '../logger.js';
import { Breaker, DEFAULT_BREAKER_OPTIONS } from './breaker.js';
import type { Clock } from '../core/clock.js';
import { BackendHealth } from './backend-health.js';
import { Claimer, DEFAULT_CLAIMS_KEPT } from './claims.js';
import { GrantRefusals } from './refusal.js';
import { Rejoin, type ReleaseResult } from './rejoin.js';
import { namedEvents, NO_EVENTS } from './events.js';
import { backendName } from '../backend/backend-address.js';
import type { Answer } from './key-agreement.js';
import { IDLE_REVALIDATE_MS, Refill } from './refill.js';
import { FleetReads } from './fleet-reads.js';
import { BackendSlot, type BackendSequenceStatus, type BackendStatus } from './backend-slot.js';
import { errorText } from '../util/error-text.js';
import type { AllocatorOptions } from './allocator-options.js';
import { guardConnection } from './connection-guard.js';
import { everywhere, type FanOutOptions } from './fan-out.js';
import { NO_RETURN_EVENTS, RangeReturns } from './range-returns.js';

export type { BackendSequenceStatus, BackendStats, BackendStatus } from './backend-slot.js';
export type { ReleaseResult } from './rejoin.js';
export type { ClaimsPolicy } from '../core/claims.js';
export type { RegressionPolicy } from '../core/counters.js';
export type { Answer } from './key-agreement.js';
export { failureOf, throwFirstFailure } from './answers.js';
export type { AllocatorOptions, BackendFactory } from './allocator-options.js';
export type { ReturnEvents } from './range-returns.js';

/**
 * Owns the backends: every call to one goes through its breaker and its connection guard, for
 * refills, sequences, schema and migrations alike. Nothing outside reaches a backend directly.
 */
export class Allocator {
  readonly #slots: BackendSlot[];
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #allowUnsafeDurability: boolean;
  readonly #health: BackendHealth;
  readonly #rejoin: Rejoin;
  readonly #claimer: Claimer;
  readonly #refill: Refill;
  /** What needs every backend, or one named backend (commands, fence, migrate, widening, retiring). */
  readonly fleet: FleetReads;
  /** Ranges given back and their reuse (range-returns.ts). */
  readonly returns: RangeReturns;

  constructor(options: AllocatorOptions) {
    this.#logger = options.logger;
    this.#clock = options.clock ?? Date.now;
    this.#allowUnsafeDurability = options.allowUnsafeDurability ?? false;
    // Metrics label a backend by its name, whoever scrapes them (http/backend-names.ts).
    const events = namedEvents(
      options.events ?? NO_EVENTS,
      new Map(options.backends.map((address, i) => [address.label, backendName(address, i)])),
    );
    this.#health = new BackendHealth(this.#logger, this.#clock);
    const random = options.random ?? Math.random;
    const guard: ConnectionGuard = (backend, settings) => this.#checkConnection(backend.label, settings);
    const backendOptions = options.backendOptions ?? DEFAULT_BACKEND_OPTIONS;
    const connect = options.connect ?? ((address, g, admin) => new Backend(address, g, backendOptions, admin));
    this.#slots = options.backends.map(
      (address, i) =>
        new BackendSlot(
          connect(address, guard, options.adminBackends?.[i]),
          new Breaker(this.#clock, random, options.breakerOptions ?? DEFAULT_BREAKER_OPTIONS),
          new GrantRefusals(this.#clock),
          backendName(address, i),
        ),
    );
    this.#claimer = new Claimer({
      slots: this.#slots,
      health: this.#health,
      events,
      logger: this.#logger,
      policy: options.claimsPolicy ?? 'preferred',
      waitMs: backendOptions.claimTimeoutMs,
      keep: options.claimsKept ?? DEFAULT_CLAIMS_KEPT,
    });
    this.#rejoin = new Rejoin({
      slots: this.#slots,
      logger: this.#logger,
      events,
      health: this.#health,
      policy: options.regressionPolicy ?? 'advance',
    });
    this.fleet = new FleetReads((operation, opts) => this.#everywhere(operation, opts));
    this.returns = new RangeReturns({
      slots: this.#slots,
      everywhere: (operation, opts) => this.#everywhere(operation, opts),
      logger: this.#logger,
      clock: this.#clock,
      events: options.returnEvents ?? NO_RETURN_EVENTS,
    });
    this.#refill = new Refill({
      slots: this.#slots,
      health: this.#health,
      claimer: this.#claimer,
      rejoin: this.#rejoin,
      events,
      logger: this.#logger,
      clock: this.#clock,
      idleRevalidateMs: options.idleRevalidateMs ?? IDLE_REVALIDATE_MS,
    });
  }

  /** How many backends are configured. */
  get backendCount(): number {
    return this.#slots.length;
  }

  #checkConnection(label: string, settings: ServerSettings): void {
    guardConnection(this.#slots, label, settings, {
      logger: this.#logger,
      allowUnsafeDurability: this.#allowUnsafeDurability,
    });
  }

  /** An operation on every backend (or those `options` name), each through its breaker (fan-out.ts). */
  #everywhere<T>(operation: (backend: TicketBackend) => Promise<T>, options: FanOutOptions = {}): Promise<Answer<T>[]> {
    return everywhere(this.#slots, this.#health, operation, options);
  }

  /** Connects to every backend once, checking its settings. Returns the failures. */
  async probe(): Promise<{ backend: string; error: unknown }[]> {
    const answers = await this.#everywhere((b) => b.settings());
    return answers.flatMap((a) => (a.ok ? [] : [{ backend: a.backend, error: a.error }]));
  }

  /**
   * What every backend reports of itself, open ones included, for the checks to judge
   * (service/check.ts). Each answer's settings also pass the connection guard's judgement, as a
   * new connection's would: a backend that passes is known (stripe, identity) from here on; one
   * that does not is left for the checks' findings to report.
   */
  async inspect(): Promise<Answer<Inspection>[]> {
    const answers = await this.#everywhere((b) => b.inspect(), { includeOpen: true });
    for (const a of answers) {
      if (!a.ok) continue;
      try {
        this.#checkConnection(a.backend, a.value.settings);
      } catch (error) {
        if (!refusesBackend(error)) throw error;
      }
    }
    return answers;
  }

  /** Each reachable backend's row of the sequence (undefined where it lacks it). */
  readSequence(name: string): Promise<Answer<SequenceSettings | undefined>[]> {
    return this.#everywhere((b) => b.readSequence(name));
  }

  /** Each reachable backend's sequences. */
  readSequences(): Promise<Answer<SequenceSettings[]>[]> {
    return this.#everywhere((b) => b.readSequences());
  }

  /** Creates the sequence on every backend (FleetReads.createSequence); the backends that took it are known to hold it. */
  createSequence(requested: SequenceSettings): Promise<boolean> {
    return this.fleet.createSequence(requested, (label) =>
      this.#slots
        .find((s) => s.label === label)
        ?.setMembership(requested.name, { kind: 'present', checkedAt: this.#clock() }),
    );
  }

  /** This process's lanes of the sequence may serve up to a larger maxId: exhausted ones reopen. */
  reopen(name: string): void {
    for (const slot of this.#slots) slot.apply(name, { kind: 'widened' });
  }

  /** Ticket tables and counters of a sequence on every backend, without its row (migrate apply). */
  async prepareSequence(name: string, firstTicket: bigint): Promise<void> {
    await this.fleet.onEvery((b) => b.prepareSequence(name, firstTicket));
  }

  /** Applies the schema on every backend; returns what it did on each, in configured order. */
  async applySchema(): Promise<({ backend: string } & SchemaApplied)[]> {
    const applied = await this.fleet.onEvery((b) => b.applySchema());
    return applied.map((a, i) => ({ backend: this.#slots[i]!.label, ...a }));
  }

  /** Each backend's label and auto_increment_offset, where known: worker pools name their owners by offset. */
  offsets(): { readonly label: string; readonly offset: bigint | undefined }[] {
    return this.#slots.map((s) => ({ label: s.label, offset: s.stripe?.offset }));
  }

  /**
   * Runs a worker-pool operation on the backends named (every one when omitted), through their
   * breakers as every other call; `includeOpen` also tries backends whose breaker is open.
   */
  onWorkerStores<T>(
    operation: (store: WorkerLeaseStore) => Promise<T>,
    options: { only?: readonly string[]; includeOpen?: boolean } = {},
  ): Promise<Answer<T>[]> {
    return this.#everywhere((b) => operation(b.workers), { ...options, serving: true });
  }

  /**
   * Runs a strict-sequence lease operation on every backend (open breakers too: a majority is wanted
   * of all of them), one answer per backend as it comes, so that a caller can settle on the first
   * majority and leave a hung backend's answer to come in the background (service/strict-quorum.ts).
   */
  onStrictStores<T>(operation: (store: StrictStore) => Promise<T>): Promise<Answer<T>>[] {
    return this.#slots.map(
      async (slot) =>
        (
          await this.#everywhere((b) => operation(b.strict), { includeOpen: true, only: [slot.label], serving: true })
        )[0]!,
    );
  }

  /** True when at least one backend's breaker is closed, its last call did not fail, and no refusal stands before its tickets. */
  get anyBackendAvailable(): boolean {
    return this.#slots.some((s) => s.issuing);
  }

  /** Fetches about `tickets` tickets' worth of ranges (refill.ts); late blocks go to `onLate`. */
  fetchRanges(
    settings: SequenceSettings,
    tickets: number,
    onLate: (ranges: IdRange[]) => void = () => undefined,
  ): Promise<IdRange[]> {
    return this.#refill.fetchRanges(settings, tickets, onLate);
  }

  /** Re-checks a backend against its peers' claims and lets it serve the sequence again (see Rejoin.release). */
  release(label: string, settings: SequenceSettings): Promise<ReleaseResult> {
    return this.#rejoin.release(label, settings);
  }

  /** Operator view of every backend; its counts add up the sequences `counted` admits (default: all). */
  status(counted?: (sequence: string) => boolean): BackendStatus[] {
    return this.#slots.map((s) => s.status(counted));
  }

  /** Per-backend view of one sequence. */
  sequenceStatus(name: string): BackendSequenceStatus[] {
    return this.#slots.map((s) => s.sequenceStatus(name));
  }

  /**
   * Reads every backend's TLS files again (SIGHUP): new connections use them. Returns the problems,
   * one per backend that could not; those keep what they had.
   */
  reloadTls(): string[] {
    const problems: string[] = [];
    for (const slot of this.#slots) {
      try {
        slot.backend.reloadTls();
      } catch (error) {
        problems.push(`backend ${slot.label}: ${errorText(error)}`);
      }
    }
    return problems;
  }

  /** Stops background probes, waits for prunes in flight and closes every backend pool. */
  async close(): Promise<void> {
    this.#health.close(this.#slots);
    await this.#claimer.drain();
    await Promise.all(this.#slots.map((s) => s.backend.close()));
  }
}
