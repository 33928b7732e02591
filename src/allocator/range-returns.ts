/**
 * Giving ranges back and reusing them (core/returned-ranges.ts; docs/uniqueness.md, "Giving ranges
 * back"). A range given back is one row on one backend. It is reused exactly once or never: the
 * claimer deletes the row on its holder (exactly one row) together with the key's claim there, then
 * claims the key on every other backend; only when every insert went through are its IDs served.
 * A racer finds the row gone; a row a restored backup brought back, or a tail given back twice,
 * meets its key somewhere and is dropped; a claimer killed half-way leaves the range lost, never
 * served twice. With any backend not answering, nothing is reused (fresh tickets serve instead).
 */
import { randomBytes } from 'node:crypto';
import type { TicketBackend } from '../backend/ticket-backend.js';
import { asHeld, keyOf, sizeOf, type ReturnedRange } from '../core/returned-ranges.js';
import type { IdRange } from '../core/blocks.js';
import type { Clock } from '../core/clock.js';
import { BackendsUnavailableError, LeaseReturnedError } from '../core/errors.js';
import type { Logger } from '../logger.js';
import { errorText } from '../util/error-text.js';
import type { BackendSlot } from './backend-slot.js';
import type { FanOutOptions } from './fan-out.js';
import type { Answer } from './key-agreement.js';

/** After a look found no returned range of a sequence, how long refills skip looking (the fast path stays as it was). */
export const NONE_RETURNED_RECHECK_MS = 5000;
/** Returned rows read per backend by one look. */
export const RETURNED_ROWS_PER_LOOK = 32;

/** Counts of IDs given back, reused and lost, for accounting (the lead wires them to metrics or usage). */
export interface ReturnEvents {
  /** `ids` IDs of the sequence were recorded as given back. */
  returned(sequence: string, ids: bigint): void;
  /** `ids` given-back IDs were claimed and will be served again. */
  reclaimed(sequence: string, ids: bigint): void;
  /** `ids` given-back IDs can never be served (a claim met, a claimer cut off half-way). */
  lost(sequence: string, ids: bigint): void;
}

/** Events that go nowhere. */
export const NO_RETURN_EVENTS: ReturnEvents = Object.freeze({ returned() {}, reclaimed() {}, lost() {} });

/** What the returns need of the allocator. */
export interface RangeReturnsOptions {
  readonly slots: readonly BackendSlot[];
  readonly everywhere: <T>(
    operation: (b: TicketBackend) => Promise<T>,
    options?: FanOutOptions,
  ) => Promise<Answer<T>[]>;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly events: ReturnEvents;
}

/** Ranges given back, and their reuse, for every sequence of a process. */
export class RangeReturns {
  readonly #o: RangeReturnsOptions;
  /** When a look last found no returned range, by sequence. */
  readonly #noneSince = new Map<string, number>();
  /** Secrets read from the backends, by label: leases are signed with the first and checked against all. */
  readonly #secrets = new Map<string, Uint8Array>();

  constructor(options: RangeReturnsOptions) {
    this.#o = options;
  }

  /**
   * Records a range given back on the first backend (in configured order) that takes it. Throws
   * LeaseReturnedError when that backend holds its key already, BackendsUnavailableError when none took it.
   */
  async giveBack(range: ReturnedRange): Promise<void> {
    const failures: string[] = [];
    for (const slot of this.#o.slots) {
      const [answer] = await this.#o.everywhere((b) => b.returns.record(range), { only: [slot.label], serving: true });
      if (answer?.ok === true) {
        if (!answer.value)
          throw new LeaseReturnedError(
            `IDs ${range.first}..${range.last} of sequence ${range.sequence} were given back before`,
          );
        this.#noneSince.delete(range.sequence);
        this.#o.events.returned(range.sequence, sizeOf(range));
        return;
      }
      failures.push(`${slot.label}: ${answer === undefined ? 'no answer' : errorText(answer.error)}`);
    }
    throw new BackendsUnavailableError(
      `no backend recorded IDs ${range.first}..${range.last} of sequence ${range.sequence} given back: ${failures.join('; ')}`,
    );
  }

  /**
   * Claims returned ranges of the sequence worth up to about `wanted` IDs (at least one range when
   * there is any), lowest first; an empty list when there is none, or when a backend does not answer
   * (a claim needs every one). Never throws for a backend: the caller fetches fresh tickets instead.
   */
  async reclaim(sequence: string, wanted: bigint): Promise<IdRange[]> {
    const since = this.#noneSince.get(sequence);
    if (since !== undefined && this.#o.clock() - since < NONE_RETURNED_RECHECK_MS) return [];
    // Every backend must take the claim: with one not closed, leave the rows for later.
    if (!this.#o.slots.every((s) => s.closed)) return [];
    const looks = await this.#o.everywhere((b) => b.returns.list(sequence, RETURNED_ROWS_PER_LOOK), { serving: true });
    // A backend that does not answer the look would not take the claim either: claiming now would only lose ranges.
    const found: { holder: string; range: ReturnedRange }[] = [];
    for (const a of looks) {
      if (!a.ok) return [];
      for (const range of a.value) found.push({ holder: a.backend, range });
    }
    if (found.length === 0) {
      this.#noneSince.set(sequence, this.#o.clock());
      return [];
    }
    found.sort((a, b) => (a.range.last < b.range.last ? -1 : a.range.last > b.range.last ? 1 : 0));
    const claimed: IdRange[] = [];
    let ids = 0n;
    for (const { holder, range } of found) {
      if (ids >= wanted) break;
      if (await this.#claim(holder, range)) {
        claimed.push(asHeld(range));
        ids += sizeOf(range);
      }
    }
    if (ids > 0n) this.#o.events.reclaimed(sequence, ids);
    return claimed;
  }

  /** One range, exactly once or never: the holder's delete and claim first, then a claim on every other backend. */
  async #claim(holder: string, range: ReturnedRange): Promise<boolean> {
    const [taken] = await this.#o.everywhere((b) => b.returns.take(range), { only: [holder], serving: true });
    if (taken?.ok !== true || taken.value === 'gone') return false;
    if (taken.value === 'claimed-before') return this.#lost(range, `its key was claimed before on ${holder}`);
    const peers = this.#o.slots.filter((s) => s.label !== holder).map((s) => s.label);
    const claims = await this.#o.everywhere((b) => b.returns.claim(range), { only: peers, serving: true });
    const refused = claims.filter((a) => !a.ok || !a.value);
    if (refused.length === 0) return true;
    // The row is gone from its holder: a range whose claim did not go through everywhere is lost for good.
    return this.#lost(
      range,
      refused
        .map((a) => (a.ok ? `its key was claimed before on ${a.backend}` : `${a.backend}: ${errorText(a.error)}`))
        .join('; '),
    );
  }

  #lost(range: ReturnedRange, why: string): false {
    this.#o.logger.warn(
      { sequence: range.sequence, first: String(range.first), last: String(range.last), key: keyOf(range) },
      `returned IDs ${range.first}..${range.last} of sequence ${range.sequence} are not reused: ${why}`,
    );
    this.#o.events.lost(range.sequence, sizeOf(range));
    return false;
  }

  /** The secret to sign new leases with: the first answering backend's, made there if it has none. */
  async signingSecret(): Promise<Uint8Array> {
    for (const slot of this.#o.slots) {
      const known = this.#secrets.get(slot.label);
      if (known !== undefined) return known;
    }
    const answers = await this.#readSecrets();
    const first = answers.find((a) => a.ok);
    if (first?.ok !== true) throw new BackendsUnavailableError('no backend answered for the lease secret');
    return first.value;
  }

  /** Every secret a lease may have been signed with; `fresh` reads the backends again first. */
  async verifyingSecrets(fresh: boolean): Promise<Uint8Array[]> {
    if (fresh || this.#secrets.size === 0) await this.#readSecrets();
    return [...this.#secrets.values()];
  }

  async #readSecrets(): Promise<Answer<Uint8Array>[]> {
    const answers = await this.#o.everywhere((b) => b.returns.leaseSecret(() => randomBytes(32)), { serving: true });
    for (const a of answers) if (a.ok) this.#secrets.set(a.backend, a.value);
    return answers;
  }

  /** Deletes every returned row on every backend (fence); throws unless every backend answered. */
  async dropAll(): Promise<number> {
    const answers = await this.#o.everywhere((b) => b.returns.dropAll(), { includeOpen: true });
    for (const a of answers)
      if (!a.ok)
        throw new BackendsUnavailableError(
          `backend ${a.backend} did not drop its returned ranges: ${errorText(a.error)}`,
        );
    this.#noneSince.clear();
    return answers.reduce((n, a) => n + (a.ok ? a.value : 0), 0);
  }
}
