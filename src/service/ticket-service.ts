/** What the HTTP layer and the CLI ask of ticketd: IDs, blocks and sequences, by name. */
import type { Allocator, BackendStatus, ReleaseResult } from '../allocator/allocator.js';
import { ANONYMOUS_CALLER, type Caller } from '../core/caller.js';
import type { Clock } from '../core/clock.js';
import { assertSequenceName, settleDefaultMaxId, type IdMode, type SequenceSettings } from '../core/sequence.js';
import { judgeWidening } from '../core/widening.js';
import type { IdRange } from '../core/blocks.js';
import { BackendsUnavailableError, BadRequestError, LeaseInvalidError } from '../core/errors.js';
import { reuseAllowed, sizeOf, tailOf } from '../core/returned-ranges.js';
import { signLease, verifyLease } from './block-leases.js';
import type { Logger } from '../logger.js';
import type { CapacityStatus } from './capacity.js';
import type { CacheStatus } from './sequence-entry.js';
import { listSequences, type SequenceList } from './sequence-list.js';
import { MAX_UNKNOWN_SEQUENCES } from './refused-names.js';
import { rowToRetire } from './sequence-rows.js';
import { decodeId, type DecodedId } from './decode.js';
import type { IssuedIds } from './opaque-ids.js';
import { ServedSequences, type StrictContext } from './served-sequences.js';
import { liveLeader } from '../core/strict.js';
import { firstMajority } from './strict-quorum.js';

export type { StrictContext } from './served-sequences.js';

/** A block leased to a client, with the lease to give it back by when the sequence takes IDs back. */
export interface LeasedBlock {
  readonly block: IdRange;
  readonly lease?: string;
}

/** Dependencies of the service. */
export interface TicketServiceOptions {
  readonly allocator: Allocator;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** How this process leads or follows strict sequences; without it a strict sequence is refused. */
  readonly strict?: StrictContext;
}

/** Issues IDs from per-sequence caches and manages sequences on every backend. */
export class TicketService {
  readonly #allocator: Allocator;
  readonly #served: ServedSequences;
  readonly #strictInstance: string | undefined;
  /** Modes of sequences this process has not loaded, as read for the metrics' redaction (idsOf). */
  readonly #modes = new Map<string, IdMode>();

  constructor(options: TicketServiceOptions) {
    this.#allocator = options.allocator;
    this.#strictInstance = options.strict?.instance;
    this.#served = new ServedSequences({
      allocator: options.allocator,
      logger: options.logger,
      clock: options.clock ?? Date.now,
      strict: options.strict,
    });
  }

  /**
   * Takes `count` IDs through the sequence's issuer (issuer.ts): at once when memory holds them,
   * otherwise a promise that waits on MySQL, or on a strict sequence's leader (forwarded on behalf
   * of `caller`). The fast path and the Express routes both call this, once per request.
   */
  issue(name: string, count: number, caller: Caller = ANONYMOUS_CALLER): IssuedIds | Promise<IssuedIds> {
    const entry = this.#served.loaded(name);
    return entry === undefined ? this.#issueLoading(name, count, caller) : entry.issuer.issue(count, caller);
  }

  async #issueLoading(name: string, count: number, caller: Caller): Promise<IssuedIds> {
    return (await this.#served.entry(name)).issuer.issue(count, caller);
  }

  /**
   * Which ordered ID, ticket and backend an ID of the sequence stands for (admin only: it undoes P);
   * an ID never handed out is an IdNotIssuedError (decode.ts).
   */
  async decode(name: string, id: bigint): Promise<DecodedId> {
    const { settings, codec } = await this.#served.entry(name);
    return decodeId(this.#allocator, settings, codec, id);
  }

  /** A range of a strict sequence, served only if this process leads it (a follower forwarded the call). */
  async strictRange(name: string, count: number, caller: Caller = ANONYMOUS_CALLER): Promise<IdRange> {
    await this.#served.entry(name);
    const strict = this.#served.strict(name);
    if (strict === undefined)
      throw new BadRequestError(`sequence ${name} is not strict: ask POST /v1/sequences/${name}/ids`);
    return strict.take(count, caller, true);
  }

  /**
   * Who leads a strict sequence, as its lease rows say now (null: nobody holds a live lease);
   * undefined for another mode.
   */
  async strictLeader(
    name: string,
  ): Promise<{ readonly epoch: string; readonly url: string; readonly self: boolean } | null | undefined> {
    const { settings } = await this.#served.entry(name);
    if (settings.ids !== 'strict') return undefined;
    // As an election reads them: a majority's rows, without waiting for a hung backend; short of a majority, every row that comes.
    const reads = await firstMajority(
      this.#allocator.onStrictStores((s) => s.read(name)),
      (a) => a.ok,
    );
    const answers = reads.reached ? reads.answers : await reads.all;
    const live = liveLeader(answers.flatMap((a) => (a.ok && a.value !== undefined ? [a.value] : [])));
    return live === undefined
      ? null
      : { epoch: String(live.epoch), url: live.leaderUrl, self: live.leader === this.#strictInstance };
  }

  /**
   * Leases one whole block (a fresh ticket's IDs) to a client that hands them out itself (not of a
   * strict sequence); with a `lease` to give its unused tail back when the sequence takes IDs back.
   */
  async leaseBlock(name: string): Promise<LeasedBlock> {
    const entry = await this.#served.entry(name);
    const block = await entry.issuer.leaseBlock();
    if (!reuseAllowed(entry.settings)) return { block };
    try {
      return { block, lease: signLease(await this.#allocator.returns.signingSecret(), name, block) };
    } catch (error) {
      // No backend gave its secret: the block is served all the same, and cannot be given back.
      if (error instanceof BackendsUnavailableError) return { block };
      throw error;
    }
  }

  /**
   * Gives back IDs `from`..last of a leased block (its lease, as POST …/blocks answered it): they are
   * recorded on one backend, and served again by a later refill. Returns how many.
   */
  async returnBlock(name: string, lease: string, from: bigint): Promise<bigint> {
    const { settings } = await this.#served.entry(name);
    if (!reuseAllowed(settings))
      throw new BadRequestError(`sequence ${name} does not take IDs back (${settings.ids} IDs without reuse)`);
    const returns = this.#allocator.returns;
    let block: IdRange;
    try {
      block = verifyLease(await returns.verifyingSecrets(false), name, lease);
    } catch (error) {
      // A backend this process has not read the secret of may have signed it.
      if (!(error instanceof LeaseInvalidError)) throw error;
      block = verifyLease(await returns.verifyingSecrets(true), name, lease);
    }
    const tail = tailOf(name, block, from);
    if (tail === undefined)
      throw new BadRequestError(`from (${from}) lies outside the lease's IDs ${block.first}..${block.last}`);
    await returns.giveBack(tail);
    return sizeOf(tail);
  }

  /** Settings of a known sequence (404 when no reachable backend has it). */
  async settings(name: string): Promise<SequenceSettings> {
    return (await this.#served.entry(name)).settings;
  }

  /**
   * The sequence as the backends hold it now, read for this call (a widening or a retirement made
   * by another process or the CLI shows at once); `cached` when no backend answered the read and
   * these are the settings this process last read.
   */
  async currentSettings(name: string): Promise<{ readonly settings: SequenceSettings; readonly cached: boolean }> {
    const entry = await this.#served.entry(name);
    const verdict = await this.#served.refresh(entry);
    if (verdict.kind === 'retired') throw this.#served.drop(name);
    return { settings: entry.settings, cached: !verdict.answered };
  }

  /** Creates the sequence on every backend (createFromRequest): true when created anywhere now. */
  async createSequence(requested: SequenceSettings): Promise<boolean> {
    return (await this.createFromRequest(requested)).created;
  }

  /**
   * Creates the sequence on every backend (Allocator.createSequence): `created` is true when created
   * anywhere now; `settings` are those it has (a request without maxId keeps an existing old default).
   */
  async createFromRequest(asked: SequenceSettings): Promise<{ created: boolean; settings: SequenceSettings }> {
    this.#served.forgetRefusal(asked.name);
    const requested =
      asked.maxIdDefaulted === true
        ? settleDefaultMaxId(asked, await this.#allocator.fleet.sequenceRows(asked.name))
        : asked;
    return { created: await this.#allocator.createSequence(requested), settings: requested };
  }

  /**
   * Raises an ordered sequence's maxId on every backend (core/widening.ts), then serves up to it
   * here. Returns the settings as they now are. A backend down: 503, and a repeat completes it.
   */
  async widen(name: string, maxId: bigint): Promise<SequenceSettings> {
    const entry = await this.#served.entry(name);
    // Judged against what the backends hold, not this process's copy: another may have widened it.
    if ((await this.#served.refresh(entry)).kind === 'retired') throw this.#served.drop(name);
    if (judgeWidening(entry.settings, maxId)) await this.#allocator.fleet.widenSequence(name, maxId);
    if (maxId > entry.settings.maxId) this.#served.adopt(entry, { ...entry.settings, maxId });
    return entry.settings;
  }

  /**
   * Retires the sequence on every backend, for good (Allocator.retireSequence); repeating it on a
   * retired one completes what a backend that did not answer left. Returns its settings.
   */
  async retire(name: string): Promise<SequenceSettings> {
    assertSequenceName(name);
    const row = rowToRetire(name, await this.#allocator.readSequence(name));
    await this.#allocator.fleet.retireSequence(row);
    this.#served.drop(name);
    return { ...row, retired: true };
  }

  /** Every sequence found on a reachable backend, with the backends that have it, and the backends that did not answer. */
  listSequences(): Promise<SequenceList> {
    return listSequences(this.#allocator);
  }

  /** Re-checks a backend against the claims and lets it serve the sequence again (lifts a quarantine). */
  async release(name: string, backend: string): Promise<ReleaseResult> {
    const entry = await this.#served.entry(name);
    return this.#allocator.release(backend, entry.settings);
  }

  /** The cache of a sequence as seen by this process, if it has served it. */
  cacheStatus(name: string): CacheStatus | undefined {
    return this.#served.loaded(name)?.cacheStatus();
  }

  /** How much of the sequence's maxId is used, as far as this process has seen; undefined before. */
  capacityStatus(name: string): CapacityStatus | undefined {
    return this.#served.loaded(name)?.capacityStatus();
  }

  /** Settings of a sequence this process has served; undefined for others. */
  servedSettings(name: string): SequenceSettings | undefined {
    return this.#served.loaded(name)?.settings;
  }

  /** IDs handed out by this process so far, over the sequences `counted` admits (default: every one). */
  issuedTotal(counted: (sequence: string) => boolean = () => true): number {
    let total = 0;
    for (const [name, entry] of this.#served.all()) if (counted(name)) total += entry.issued;
    return total;
  }

  /**
   * The ID mode of a sequence, as loaded or read from a backend (and then remembered: a sequence's
   * mode never changes); undefined when no backend answered with it.
   */
  async idsOf(name: string): Promise<IdMode | undefined> {
    const known = this.#served.loaded(name)?.settings.ids ?? this.#modes.get(name);
    if (known !== undefined) return known;
    const found = (await this.#allocator.readSequence(name)).find((a) => a.ok && a.value !== undefined);
    const mode = found?.ok === true ? found.value?.ids : undefined;
    if (mode !== undefined && this.#modes.size < MAX_UNKNOWN_SEQUENCES) this.#modes.set(name, mode);
    return mode;
  }

  /** Names of the sequences this process found retired (it served or was asked for them). */
  retiredSequences(): string[] {
    return this.#served.retired();
  }

  /** Names of the sequences this process has served. */
  servedSequences(): string[] {
    return [...this.#served.all()].map(([name]) => name);
  }

  /** Per-backend state of one sequence. */
  backendsFor(name: string): ReturnType<Allocator['sequenceStatus']> {
    return this.#allocator.sequenceStatus(name);
  }

  /** State of every backend; its counts add up the sequences `counted` admits (default: every one). */
  backendStatus(counted?: (sequence: string) => boolean): BackendStatus[] {
    return this.#allocator.status(counted);
  }

  /** True when an ID can be issued now: a backend is usable or some cache holds IDs. */
  get ready(): boolean {
    if (this.#allocator.anyBackendAvailable) return true;
    return [...this.#served.all()].some(([, e]) => e.available > 0);
  }

  /** Releases the backend pools. */
  async close(): Promise<void> {
    await this.#served.close();
    await this.#allocator.close();
  }
}
