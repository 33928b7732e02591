/** What the HTTP layer and the CLI ask of ticketd: IDs, blocks and sequences, by name. */
import { Allocator, type BackendStatus, type ReleaseResult } from '../allocator/allocator.js';
import type { Clock } from '../allocator/breaker.js';
import { assertSequenceName, settleDefaultMaxId, type IdMode, type SequenceSettings } from '../core/sequence.js';
import { judgeRows, judgeWidening } from '../core/widening.js';
import type { IdRange } from '../core/blocks.js';
import { EpisodeLog } from '../util/episode-log.js';
import { errorText } from '../util/error-text.js';
import { BackendsUnavailableError, BadRequestError, SequenceExhaustedError, SequenceRetiredError, StrictNoBlocksError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { CapacityStatus } from './capacity.js';
import { EncoderThread } from './encoder-thread.js';
import { SequenceEntry, type CacheStatus } from './sequence-entry.js';
import { listSequences, type SequenceList } from './sequence-list.js';
import { MAX_UNKNOWN_SEQUENCES, RefusedNames } from './refused-names.js';
import { resolveSequence, retiredError, rowsOf, rowToRetire } from './sequence-rows.js';
import { decodeId, type DecodedId } from './decode.js';
import type { IssuedIds } from './opaque-ids.js';
import { StrictSequence, type StrictSequenceOptions } from './strict-sequence.js';
import { liveLeader } from '../core/strict.js';

/** Dependencies of the service. */
export interface TicketServiceOptions {
  readonly allocator: Allocator;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** How this process leads or follows strict sequences; without it a strict sequence is refused. */
  readonly strict?: StrictContext;
}

/** What every strict sequence of a process shares (strict-sequence.ts). */
export type StrictContext = Omit<StrictSequenceOptions, 'allocator' | 'logger'>;

/** Issues IDs from per-sequence caches and manages sequences on every backend. */
export class TicketService {
  readonly #allocator: Allocator;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #entries = new Map<string, SequenceEntry>();
  /** The strict sequences among them, which serve through their leader and never from the cache. */
  readonly #strict = new Map<string, StrictSequence>();
  readonly #strictContext: StrictContext | undefined;
  readonly #resolving = new Map<string, Promise<SequenceEntry>>();
  /** Where opaque sequences' IDs are encoded ahead, off the thread that answers requests. */
  readonly #encoder = new EncoderThread((error) => this.#logger.warn({ err: errorText(error) }, 'the encoder thread failed: opaque IDs are encoded on the request thread from now on'));
  /** Modes of sequences this process has not loaded, as read for the metrics' redaction (idsOf). */
  readonly #modes = new Map<string, IdMode>();
  readonly #refused: RefusedNames;
  /** Prefetches that fail on every refill while a backend is cut off: one line per episode. */
  readonly #episodes: EpisodeLog;

  constructor(options: TicketServiceOptions) {
    this.#allocator = options.allocator;
    this.#logger = options.logger;
    this.#clock = options.clock ?? Date.now;
    this.#episodes = new EpisodeLog(this.#logger, { clock: this.#clock });
    this.#refused = new RefusedNames(this.#clock);
    this.#strictContext = options.strict;
  }

  /** Takes `count` IDs from memory if the sequence is cached and has them; undefined otherwise. */
  tryIssue(name: string, count: number): IssuedIds | undefined {
    const entry = this.#entries.get(name);
    if (entry === undefined) return undefined;
    this.#checkDue(entry);
    const strict = this.#strict.get(name);
    if (strict !== undefined) {
      const range = strict.tryTake(count);
      return range === undefined ? undefined : [range];
    }
    if (entry.settings.ids === 'strict') return undefined;
    return entry.codec.tryTake(count);
  }

  /**
   * Takes `count` IDs; waits on MySQL only when the sequence's cache cannot cover them. A strict
   * sequence's come from its leader, this process or another (`authorization` goes along to it).
   */
  async issue(name: string, count: number, authorization?: string): Promise<IssuedIds> {
    const entry = await this.#entry(name);
    const strict = this.#strict.get(name);
    if (strict !== undefined) return [await strict.take(count, authorization)];
    if (entry.settings.ids === 'strict') throw new BadRequestError(`sequence ${name} is strict: only a serving ticketd (which leads or follows through HTTP) issues its IDs`);
    const ready = this.tryIssue(name, count);
    if (ready !== undefined) return ready;
    const ranges = await entry.cache.take(count);
    return entry.codec.encode(ranges);
  }

  /**
   * Which ordered ID, ticket and backend an ID of the sequence stands for (admin only: it undoes P);
   * an ID never handed out is an IdNotIssuedError (decode.ts).
   */
  async decode(name: string, id: bigint): Promise<DecodedId> {
    const { settings, codec } = await this.#entry(name);
    return decodeId(this.#allocator, settings, codec, id);
  }

  /** A range of a strict sequence, served only if this process leads it (a follower forwarded the call). */
  async strictRange(name: string, count: number, authorization?: string): Promise<IdRange> {
    await this.#entry(name);
    const strict = this.#strict.get(name);
    if (strict === undefined) throw new BadRequestError(`sequence ${name} is not strict: ask POST /v1/sequences/${name}/ids`);
    return strict.take(count, authorization, true);
  }

  /**
   * Who leads a strict sequence, as its lease rows say now (null: nobody holds a live lease);
   * undefined for another mode.
   */
  async strictLeader(name: string): Promise<{ readonly epoch: string; readonly url: string; readonly self: boolean } | null | undefined> {
    const { settings } = await this.#entry(name);
    if (settings.ids !== 'strict') return undefined;
    const answers = await this.#allocator.onStrictStores((s) => s.read(name));
    const live = liveLeader(answers.flatMap((a) => (a.ok && a.value !== undefined ? [a.value] : [])));
    return live === undefined ? null : { epoch: String(live.epoch), url: live.leaderUrl, self: live.leader === this.#strictContext?.instance };
  }

  /** Leases one whole block (a fresh ticket's IDs) to a client that hands them out itself. */
  async leaseBlock(name: string): Promise<IdRange> {
    const entry = await this.#entry(name);
    if (entry.settings.ids === 'strict') {
      throw new StrictNoBlocksError(`sequence ${name} is strict: a block served by its client would leave real-time order; ask POST /v1/sequences/${name}/ids or GET …/next`);
    }
    const ranges = await this.#fetch(entry, 1);
    return ranges[0] as IdRange;
  }

  /** Settings of a known sequence (404 when no reachable backend has it). */
  async settings(name: string): Promise<SequenceSettings> {
    return (await this.#entry(name)).settings;
  }

  /**
   * The sequence as the backends hold it now, read for this call (a widening or a retirement made
   * by another process or the CLI shows at once); `cached` when no backend answered the read and
   * these are the settings this process last read.
   */
  async currentSettings(name: string): Promise<{ readonly settings: SequenceSettings; readonly cached: boolean }> {
    const entry = await this.#entry(name);
    const verdict = await this.#refresh(entry);
    if (verdict.kind === 'retired') throw this.#drop(name);
    return { settings: entry.settings, cached: !verdict.answered };
  }

  /** The sequence's cache and settings, loaded from the backends on first use. */
  #entry(name: string): SequenceEntry | Promise<SequenceEntry> {
    const known = this.#entries.get(name);
    if (known !== undefined) {
      this.#checkDue(known);
      return known;
    }
    assertSequenceName(name);
    const refused = this.#refused.recent(name);
    if (refused !== undefined) return Promise.reject(refused);
    const pending = this.#resolving.get(name);
    if (pending !== undefined) return pending;
    const resolving = this.#load(name).finally(() => this.#resolving.delete(name));
    this.#resolving.set(name, resolving);
    return resolving;
  }

  async #load(name: string): Promise<SequenceEntry> {
    const resolved = resolveSequence(name, await this.#allocator.readSequence(name));
    if ('error' in resolved) {
      if (resolved.remember) this.#refused.remember(name, resolved.error);
      throw resolved.error;
    }
    const entry = new SequenceEntry(resolved.settings, {
      clock: this.#clock,
      logger: this.#logger,
      encoder: this.#encoder,
      refill: (e, tickets, late) => this.#fetch(e, tickets, late),
      onBackgroundError: (error) => this.#episodes.note(`prefetch ${name}`, { sequence: name, err: errorText(error) }, `prefetch of sequence ${name} failed`),
    });
    if (resolved.settings.ids === 'strict' && this.#strictContext !== undefined) {
      this.#strict.set(name, new StrictSequence(resolved.settings, { ...this.#strictContext, allocator: this.#allocator, logger: this.#logger }));
    }
    this.#entries.set(name, entry);
    return entry;
  }

  /**
   * Reads the sequence from the backends afresh and follows what changed: retired on any backend
   * that answered (this process drops it and refuses it from now on), or a larger maxId on every one
   * of them (it serves up to the smallest of theirs, the bound every one has).
   */
  async #refresh(entry: SequenceEntry): Promise<{ readonly kind: 'retired' | 'widened' | 'same'; readonly answered: boolean }> {
    const answers = await this.#allocator.readSequence(entry.settings.name);
    entry.checked();
    const verdict = judgeRows(entry.settings, rowsOf(answers));
    if (verdict.kind === 'retired') this.#drop(entry.settings.name);
    if (verdict.kind === 'widened') this.#adopt(entry, { ...entry.settings, maxId: verdict.maxId });
    return { kind: verdict.kind, answered: answers.some((a) => a.ok) };
  }

  /** The sequence's maxId grew: this process's cache, capacity view and lanes serve up to it. */
  #adopt(entry: SequenceEntry, settings: SequenceSettings): void {
    entry.adopt(settings);
    this.#allocator.reopen(settings.name);
  }

  /**
   * Every SETTINGS_RECHECK_MS a sequence served from memory is read again, in the background: a
   * process holding cached blocks of a sequence retired elsewhere stops within that time.
   */
  #checkDue(entry: SequenceEntry): void {
    if (!entry.takeRecheck()) return;
    void this.#refresh(entry)
      .catch(() => undefined)
      .finally(() => entry.checked());
  }

  /** A retired sequence: its cache is dropped (a gap, never a repeat) and it is refused from now on. */
  #drop(name: string): SequenceRetiredError {
    const retired = retiredError(name);
    this.#entries.delete(name);
    const strict = this.#strict.get(name);
    this.#strict.delete(name);
    void strict?.close();
    this.#refused.remember(name, retired);
    return retired;
  }

  /** Fetches ranges for a sequence and keeps its capacity view up to date. */
  async #fetch(entry: SequenceEntry, tickets: number, late: (ranges: IdRange[]) => void = () => undefined, widenedOnce = false): Promise<IdRange[]> {
    const asked = entry.settings;
    try {
      const ranges = await this.#allocator.fetchRanges(asked, tickets, (more) => {
        entry.observe(more);
        late(more);
      });
      entry.observe(ranges);
      return ranges;
    } catch (error) {
      if (error instanceof SequenceExhaustedError && !widenedOnce) {
        // No backend gave a ticket: the sequence may have been widened (PATCH) or retired (DELETE), from any process.
        const now = (await this.#refresh(entry)).kind;
        if (now === 'retired') throw this.#drop(entry.settings.name);
        // Widened now, or by a recheck that ran while this refill asked at the old bound.
        if (now === 'widened' || entry.settings !== asked) return this.#fetch(entry, tickets, late, true);
      }
      if (error instanceof SequenceExhaustedError) entry.markExhausted();
      // Why no backend issued names tickets: not for an opaque sequence's clients (the log and the admin's detail keep it).
      if (error instanceof BackendsUnavailableError && entry.settings.ids === 'opaque') {
        const name = entry.settings.name;
        throw new BackendsUnavailableError(`no backend issued a ticket for sequence ${name}; the admin's GET /v1/sequences/${name} says why`, { retryAfterSeconds: error.retryAfterSeconds, cause: error });
      }
      throw error;
    }
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
    this.#refused.forget(asked.name);
    const requested = asked.maxIdDefaulted === true ? settleDefaultMaxId(asked, await this.#allocator.fleet.sequenceRows(asked.name)) : asked;
    return { created: await this.#allocator.createSequence(requested), settings: requested };
  }

  /**
   * Raises an ordered sequence's maxId on every backend (core/widening.ts), then serves up to it
   * here. Returns the settings as they now are. A backend down: 503, and a repeat completes it.
   */
  async widen(name: string, maxId: bigint): Promise<SequenceSettings> {
    const entry = await this.#entry(name);
    // Judged against what the backends hold, not this process's copy: another may have widened it.
    if ((await this.#refresh(entry)).kind === 'retired') throw this.#drop(name);
    if (judgeWidening(entry.settings, maxId)) await this.#allocator.fleet.widenSequence(name, maxId);
    if (maxId > entry.settings.maxId) this.#adopt(entry, { ...entry.settings, maxId });
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
    this.#drop(name);
    return { ...row, retired: true };
  }

  /** Every sequence found on a reachable backend, with the backends that have it, and the backends that did not answer. */
  listSequences(): Promise<SequenceList> {
    return listSequences(this.#allocator);
  }

  /** Re-checks a backend against the claims and lets it serve the sequence again (lifts a quarantine). */
  async release(name: string, backend: string): Promise<ReleaseResult> {
    const entry = await this.#entry(name);
    return this.#allocator.release(backend, entry.settings);
  }

  /** The cache of a sequence as seen by this process, if it has served it. */
  cacheStatus(name: string): CacheStatus | undefined {
    return this.#entries.get(name)?.cacheStatus();
  }

  /** How much of the sequence's maxId is used, as far as this process has seen; undefined before. */
  capacityStatus(name: string): CapacityStatus | undefined {
    return this.#entries.get(name)?.capacityStatus();
  }

  /** Settings of a sequence this process has served; undefined for others. */
  servedSettings(name: string): SequenceSettings | undefined {
    return this.#entries.get(name)?.settings;
  }

  /** IDs handed out by this process so far, over the sequences `counted` admits (default: every one). */
  issuedTotal(counted: (sequence: string) => boolean = () => true): number {
    let total = 0;
    for (const [name, entry] of this.#entries) if (counted(name)) total += entry.issued;
    return total;
  }

  /**
   * The ID mode of a sequence, as loaded or read from a backend (and then remembered: a sequence's
   * mode never changes); undefined when no backend answered with it.
   */
  async idsOf(name: string): Promise<IdMode | undefined> {
    const known = this.#entries.get(name)?.settings.ids ?? this.#modes.get(name);
    if (known !== undefined) return known;
    const found = (await this.#allocator.readSequence(name)).find((a) => a.ok && a.value !== undefined);
    const mode = found?.ok === true ? found.value?.ids : undefined;
    if (mode !== undefined && this.#modes.size < MAX_UNKNOWN_SEQUENCES) this.#modes.set(name, mode);
    return mode;
  }

  /** Names of the sequences this process found retired (it served or was asked for them). */
  retiredSequences(): string[] {
    return this.#refused.retired();
  }

  /** Names of the sequences this process has served. */
  servedSequences(): string[] {
    return [...this.#entries.keys()];
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
    return [...this.#entries.values()].some((e) => e.available > 0);
  }

  /** Releases the backend pools. */
  async close(): Promise<void> {
    await Promise.all([...this.#strict.values()].map((s) => s.close()));
    this.#episodes.close();
    await this.#encoder.close();
    await this.#allocator.close();
  }
}
