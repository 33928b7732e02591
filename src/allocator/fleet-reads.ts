/**
 * What needs every backend, or one named backend, through the same breakers and connection guards
 * as every other call: the commands' reads and writes (fence, migrate, growing and shrinking the
 * fleet, decode), and widening and retiring a sequence. Reached as `Allocator.fleet`.
 */
import type { SchemaApplied, TicketBackend } from '../backend/ticket-backend.js';
import type { ClassClaims } from '../core/claims.js';
import type { ClaimHistory } from '../core/fence.js';
import type { SequenceSettings } from '../core/sequence.js';
import type { ResidueClass, Stripe } from '../core/stripes.js';
import {
  BackendAccessDeniedError,
  BackendsUnavailableError,
  SchemaOutdatedError,
  SequenceConflictError,
  UnknownBackendError,
  UpgradeRequiredError,
} from '../core/errors.js';
import { firstUsefulTicket } from '../core/blocks.js';
import { errorText } from '../util/error-text.js';
import { failureOf, throwFirstFailure } from './answers.js';
import { agreeOnKey, type Answer } from './key-agreement.js';

/** The allocator's guarded call on the backends (every one, or those named; open ones too when asked). */
export type Everywhere = <T>(
  operation: (backend: TicketBackend) => Promise<T>,
  options?: { includeOpen?: boolean; only?: readonly string[] },
) => Promise<Answer<T>[]>;

/** Operations on every backend, or one, for commands. */
export class FleetReads {
  readonly #everywhere: Everywhere;

  constructor(everywhere: Everywhere) {
    this.#everywhere = everywhere;
  }

  /** The operation on every backend, open ones included; throws the first failure (commands that need every backend). */
  async onEvery<T>(operation: (backend: TicketBackend) => Promise<T>): Promise<T[]> {
    const answers = await this.#everywhere(operation, { includeOpen: true });
    throwFirstFailure(answers);
    return answers.flatMap((a) => (a.ok ? [a.value] : []));
  }

  /** The operation on one named backend, open or not; throws what it failed with. */
  async onOne<T>(label: string, operation: (backend: TicketBackend) => Promise<T>): Promise<T> {
    const [answer] = await this.#everywhere(operation, { includeOpen: true, only: [label] });
    if (answer === undefined) throw new UnknownBackendError(`no backend ${label} among TICKETD_BACKENDS`);
    if (!answer.ok) throw failureOf(answer);
    return answer.value;
  }

  /**
   * Creates the sequence on every backend (an opaque one with the key they agree on). Returns true
   * when it was created anywhere now, false when every backend already had it. A conflicting one is
   * refused; a backend that does not answer makes it fail with 503, and a repeat completes it.
   */
  async createSequence(requested: SequenceSettings, onCreated: (label: string) => void): Promise<boolean> {
    const { settings, created } =
      requested.ids === 'opaque'
        ? await agreeOnKey((op) => this.#everywhere(op, { includeOpen: true }), requested)
        : { settings: requested, created: false };
    const answers = await this.#everywhere((b) => b.createSequence(settings, firstUsefulTicket(settings)), {
      includeOpen: true,
    });
    // A conflict, a schema too old to hold the sequence, or a sequence of a later ticketd is the answer: repeating will not help.
    const refusal = answers.find(
      (a) =>
        !a.ok &&
        (a.error instanceof SequenceConflictError ||
          a.error instanceof SchemaOutdatedError ||
          a.error instanceof UpgradeRequiredError),
    );
    if (refusal !== undefined && !refusal.ok) throw refusal.error;
    for (const a of answers) if (a.ok) onCreated(a.backend);
    throwUnfinished(answers, `sequence ${settings.name} was not created`);
    return created || answers.some((a) => a.ok && a.value);
  }

  /** The sequence's rows on the backends that answer, open ones included (those that do not are met again by what follows). */
  async sequenceRows(name: string): Promise<SequenceSettings[]> {
    const answers = await this.#everywhere((b) => b.readSequence(name), { includeOpen: true });
    return answers.flatMap((a) => (a.ok && a.value !== undefined ? [a.value] : []));
  }

  /** Raises the sequence's maxId on every backend, open ones included; one that fails makes it a 503 to repeat. */
  async widenSequence(name: string, maxId: bigint): Promise<void> {
    const answers = await this.#everywhere((b) => b.widenSequence(name, maxId), { includeOpen: true });
    // A ceiling (a migrated sequence's legacy reserve), or a schema too old to know one, is the answer: repeating will not help.
    const refusal = answers.find(
      (a) => !a.ok && (a.error instanceof SequenceConflictError || a.error instanceof SchemaOutdatedError),
    );
    if (refusal !== undefined && !refusal.ok) throw refusal.error;
    throwUnfinished(answers, `maxId of sequence ${name} was not raised`);
  }

  /** Records the sequence's ceiling on every backend, open ones included; one that fails makes it a 503 to repeat. */
  async recordCeiling(name: string, ceiling: bigint, reason: string): Promise<void> {
    throwUnfinished(
      await this.#everywhere((b) => b.recordCeiling(name, ceiling, reason), { includeOpen: true }),
      `the ceiling of sequence ${name} was not recorded`,
    );
  }

  /** Lifts the sequence's ceiling on every backend; one that fails makes it a 503 to repeat. */
  async liftCeiling(name: string): Promise<void> {
    throwUnfinished(
      await this.#everywhere((b) => b.liftCeiling(name), { includeOpen: true }),
      `the ceiling of sequence ${name} was not lifted`,
    );
  }

  /**
   * Retires the sequence on every backend, open ones included. Only once every backend has done so
   * may the caller answer: from then on no backend hands a ticket of it to any ticketd.
   */
  async retireSequence(settings: SequenceSettings): Promise<void> {
    const answers = await this.#everywhere((b) => b.retireSequence(settings), { includeOpen: true });
    const refusal = answers.find((a) => !a.ok && a.error instanceof SchemaOutdatedError);
    if (refusal !== undefined && !refusal.ok) throw refusal.error;
    // The backends that answered issue nothing of it already.
    throwUnfinished(answers, `sequence ${settings.name} was not retired`);
  }

  /** Every backend's residue class, read afresh, in configured order (migrate verify). */
  stripes(): Promise<Stripe[]> {
    return this.onEvery((b) => b.settings());
  }

  /** Every backend's kept claims of a sequence per residue class, with their times (fence). */
  async claimHistories(name: string): Promise<ClaimHistory[]> {
    return (await this.onEvery((b) => b.readClaimHistory(name))).flat();
  }

  /** Advances a sequence's counter on every backend so that its next ticket is ≥ minTicket (fence). Never lowers one. */
  async advanceEverywhere(name: string, minTicket: bigint): Promise<void> {
    await this.onEvery((b) => b.advanceCounter(name, minTicket));
  }

  /** The schema on one backend only (a backend joining the fleet); returns what it did there. */
  async applySchemaOn(label: string): Promise<SchemaApplied> {
    return this.onOne(label, (b) => b.applySchema());
  }

  /**
   * The highest ticket of a sequence any backend has issued, claimed or left below a floor, in any
   * class; backends that lack the sequence count as 0. Needs every backend (fence, a backend joining).
   */
  async highestTicketUsed(name: string): Promise<bigint> {
    const highest = await this.onEvery(async (b) => {
      if ((await b.readSequence(name)) === undefined) return 0n;
      let top = (await b.nextTicket(name)) - 1n;
      for (const c of await b.readClaims(name))
        for (const t of [c.highest, c.floor]) if (t !== undefined && t > top) top = t;
      return top;
    });
    return highest.reduce((m, t) => (t > m ? t : m), 0n);
  }

  /** Every backend's highest claim and floor per residue class of a sequence (backends that lack it hold none). */
  async claimsEverywhere(name: string): Promise<ClassClaims[]> {
    const claims = await this.onEvery(async (b) =>
      (await b.readSequence(name)) === undefined ? [] : b.readClaims(name),
    );
    return claims.flat();
  }

  /** Advances a sequence's counter on one backend only (a backend joining). Never lowers it. */
  async advanceOn(label: string, name: string, minTicket: bigint): Promise<void> {
    await this.onOne(label, (b) => b.advanceCounter(name, minTicket));
  }

  /** One backend's next ticket of a sequence (a backend joining or leaving). */
  nextTicketOn(label: string, name: string): Promise<bigint> {
    return this.onOne(label, (b) => b.nextTicket(name));
  }

  /** Writes a claim floor of a residue class on every backend but `except` (a backend leaving: its class is never reused below it). */
  async addFloorEverywhereBut(except: string, name: string, cls: ResidueClass, floor: bigint): Promise<void> {
    throwFirstFailure(
      await this.#everywhere((b) => (b.label === except ? Promise.resolve() : b.addFloor(name, cls, floor)), {
        includeOpen: true,
      }),
    );
  }

  /** Every backend's last ticket of a sequence, in configured order (migrate verify). */
  lastTickets(name: string): Promise<bigint[]> {
    return this.onEvery((b) => b.lastTicket(name));
  }

  /** One backend's last ticket of a sequence (decode); throws what the backend answered when it failed. */
  lastTicketOn(label: string, name: string): Promise<bigint> {
    return this.onOne(label, (b) => b.lastTicket(name));
  }
}

/**
 * A change every backend must make: when some did not, a 503 that names them and says what to do (a
 * repeat completes it; or, when the serving account may not change the schema, the admin account).
 */
function throwUnfinished(answers: readonly Answer<unknown>[], what: string): void {
  const failed = answers.flatMap((a) => (a.ok ? [] : [`${a.backend}: ${errorText(a.error)}`]));
  if (failed.length === 0) return;
  const denied = answers.some((a) => !a.ok && a.error instanceof BackendAccessDeniedError);
  throw new BackendsUnavailableError(
    `${what} on ${failed.join('; ')}; ${denied ? 'the serving account may not change the schema: set TICKETD_ADMIN_BACKENDS' : 'repeat the request to complete it'}`,
  );
}
