/** What the HTTP layer and the CLI ask of ticketd: IDs, blocks and sequences, by name. */
import { Allocator, type BackendStatus, type ReleaseResult } from '../allocator/allocator.js';
import type { Clock } from '../allocator/breaker.js';
import { RangeCache } from '../cache/range-cache.js';
import { assertSequenceName, conflictOf, describeSettings, sameButMaxId, type IdMode, type SequenceSettings } from '../core/sequence.js';
import { judgeWidening } from '../core/widening.js';
import { ticketOfId, type IdRange } from '../core/blocks.js';
import { ownsTicket } from '../core/stripes.js';
import { EpisodeLog } from '../util/episode-log.js';
import { errorText } from '../util/error-text.js';
import { BackendsUnavailableError, IdNotIssuedError, SequenceConflictError, SequenceExhaustedError, SequenceNotFoundError, SequenceRetiredError, UpgradeRequiredError, type TicketdError } from '../errors.js';
import { newerNeeded, THIS_VERSION } from '../core/versions.js';
import type { Logger } from '../logger.js';
import { CapacityTracker, type CapacityStatus } from './capacity.js';
import { EncoderThread } from './encoder-thread.js';
import { codecFor, type IdCodec } from './id-codec.js';
import { listSequences, type SequenceList } from './sequence-list.js';
import type { IssuedIds } from './opaque-ids.js';

/** How often a sequence served from memory is read again from the backends (retired? widened?). */
export const SETTINGS_RECHECK_MS = 5000;

/** How long a name no backend had is answered 404 without asking the backends again. */
export const UNKNOWN_SEQUENCE_TTL_MS = 1000;
/** Names remembered as unknown at most (the oldest are forgotten first). */
export const MAX_UNKNOWN_SEQUENCES = 10_000;

/** Dependencies of the service. */
export interface TicketServiceOptions {
  readonly allocator: Allocator;
  readonly logger: Logger;
  readonly clock?: Clock;
}

interface Entry {
  /** Replaced only by #adopt, when the sequence's maxId grew. */
  settings: SequenceSettings;
  readonly cache: RangeCache;
  capacity: CapacityTracker;
  /** When this process last read the sequence from the backends (retired? widened?), and whether it is reading it now. */
  checkedAt: number;
  checking: boolean;
  /** What turns the cache's ordered IDs into the ones served, chosen once from the sequence's mode. */
  readonly codec: IdCodec;
}

/** Where an ID of a sequence came from (the admin decode route). */
export interface DecodedId {
  readonly sequence: string;
  readonly id: bigint;
  readonly ids: SequenceSettings['ids'];
  readonly ordered: bigint;
  readonly ticket: bigint;
  /** The backend whose residue class holds the ticket; undefined when no known backend's does. */
  readonly backend: string | undefined;
}

/** Issues IDs from per-sequence caches and manages sequences on every backend. */
export class TicketService {
  readonly #allocator: Allocator;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #entries = new Map<string, Entry>();
  readonly #resolving = new Map<string, Promise<Entry>>();
  /** Where opaque sequences' IDs are encoded ahead, off the thread that answers requests. */
  readonly #encoder = new EncoderThread((error) => this.#logger.warn({ err: errorText(error) }, 'the encoder thread failed: opaque IDs are encoded on the request thread from now on'));
  /** Modes of sequences this process has not loaded, as read for the metrics' redaction (idsOf). */
  readonly #modes = new Map<string, IdMode>();
  /**
   * Names refused on loading, when and why: no backend had them, or they need a newer ticketd. A
   * burst of requests for them asks MySQL once.
   */
  readonly #refused = new Map<string, { readonly at: number; readonly error: TicketdError }>();
  /** Prefetches that fail on every refill while a backend is cut off: one line per episode. */
  readonly #episodes: EpisodeLog;

  constructor(options: TicketServiceOptions) {
    this.#allocator = options.allocator;
    this.#logger = options.logger;
    this.#clock = options.clock ?? Date.now;
    this.#episodes = new EpisodeLog(this.#logger, { clock: this.#clock });
  }

  /** Takes `count` IDs from memory if the sequence is cached and has them; undefined otherwise. */
  tryIssue(name: string, count: number): IssuedIds | undefined {
    const entry = this.#entries.get(name);
    if (entry === undefined) return undefined;
    this.#checkDue(entry);
    return entry.codec.tryTake(count);
  }

  /** Takes `count` IDs; waits on MySQL only when the sequence's cache cannot cover them. */
  async issue(name: string, count: number): Promise<IssuedIds> {
    const entry = await this.#entry(name);
    const ready = this.tryIssue(name, count);
    if (ready !== undefined) return ready;
    const ranges = await entry.cache.take(count);
    return entry.codec.encode(ranges);
  }

  /**
   * Which ordered ID, ticket and backend an ID of the sequence stands for (admin only: it undoes P).
   * An ID outside the domain, or whose ticket is above its backend's last ticket, was never handed
   * out: IdNotIssuedError says so instead of answering a plausible ticket.
   */
  async decode(name: string, id: bigint): Promise<DecodedId> {
    const { settings, codec } = await this.#entry(name);
    if (id <= settings.startAfter || id > settings.maxId) {
      throw new IdNotIssuedError(`ID ${id} was never issued: it is outside sequence ${name}'s domain (${settings.startAfter}, ${settings.maxId}]`);
    }
    const ordered = codec.decode(id);
    const ticket = ticketOfId(ordered, settings);
    const owner = this.#allocator.status().find((b) => b.stripe !== undefined && ownsTicket(ticket, { increment: BigInt(b.stripe.increment), offset: BigInt(b.stripe.offset) }));
    const last = owner && (await this.#allocator.lastTicketOn(owner.backend, name));
    if (last !== undefined && ticket > last) throw new IdNotIssuedError(`ID ${id} of sequence ${name} was never issued: its ticket ${ticket} is above ${owner?.backend}'s last ticket ${last}`);
    return { sequence: name, id, ids: settings.ids, ordered, ticket, backend: owner?.backend };
  }

  /** Leases one whole block (a fresh ticket's IDs) to a client that hands them out itself. */
  async leaseBlock(name: string): Promise<IdRange> {
    const entry = await this.#entry(name);
    const ranges = await this.#fetch(entry, 1);
    return ranges[0] as IdRange;
  }

  /** Settings of a known sequence (404 when no reachable backend has it). */
  async settings(name: string): Promise<SequenceSettings> {
    return (await this.#entry(name)).settings;
  }

  /** The sequence's cache and settings, loaded from the backends on first use. */
  #entry(name: string): Entry | Promise<Entry> {
    const known = this.#entries.get(name);
    if (known !== undefined) {
      this.#checkDue(known);
      return known;
    }
    assertSequenceName(name);
    const refused = this.#refused.get(name);
    if (refused !== undefined && this.#clock() - refused.at < UNKNOWN_SEQUENCE_TTL_MS) return Promise.reject(refused.error);
    const pending = this.#resolving.get(name);
    if (pending !== undefined) return pending;
    const resolving = this.#load(name).finally(() => this.#resolving.delete(name));
    this.#resolving.set(name, resolving);
    return resolving;
  }

  async #load(name: string): Promise<Entry> {
    const answers = await this.#allocator.readSequence(name);
    const found = answers.flatMap((a) => (a.ok && a.value !== undefined ? [{ backend: a.backend, settings: a.value }] : []));
    const first = found[0];
    if (first === undefined) {
      const failed = answers.flatMap((a) => (a.ok ? [] : [a]));
      if (failed.length === answers.length) {
        throw new BackendsUnavailableError(`no backend answered while looking up sequence ${name} (${failed.map((a) => `${a.backend}: ${errorText(a.error)}`).join('; ')})`, {
          cause: failed[0]?.error,
        });
      }
      const unknown = new SequenceNotFoundError(`sequence ${name} does not exist`);
      // Remembered only when every backend said so: one that did not answer may have it.
      if (failed.length === 0) this.#remember(name, unknown);
      throw unknown;
    }
    if (found.some((f) => f.settings.retired === true)) {
      const retired = new SequenceRetiredError(`sequence ${name} was retired: nothing of it is issued again, and its name is not created again`);
      this.#remember(name, retired);
      throw retired;
    }
    for (const other of found) {
      const conflict = sameButMaxId(other.settings, first.settings) ? undefined : conflictOf(other.settings, first.settings);
      if (conflict !== undefined) throw new SequenceConflictError(`sequence ${name} has ${describeSettings(first.settings)} on ${first.backend} but ${conflict} on ${other.backend}`);
    }
    // Mid-widening the backends' maxIds differ: the smallest is the bound every one of them has.
    const settings = found.reduce((least, f) => (f.settings.maxId < least.maxId ? f.settings : least), first.settings);
    const needs = found.map((f) => newerNeeded(f.settings)).find((v) => v !== undefined);
    if (needs !== undefined) {
      const tooOld = new UpgradeRequiredError(`sequence ${name} needs ticketd ${needs} or later; this process is ${THIS_VERSION}: ask another, or upgrade this one (docs/operating.md, "Upgrades and rollbacks")`);
      this.#remember(name, tooOld);
      throw tooOld;
    }
    const capacity = this.#capacityOf(settings);
    const cache = new RangeCache({
      sequence: name,
      blockSize: settings.blockSize,
      refill: (tickets, late) => this.#fetch(entry, tickets, late),
      clock: this.#clock,
      onBackgroundError: (error) => this.#episodes.note(`prefetch ${name}`, { sequence: name, err: errorText(error) }, `prefetch of sequence ${name} failed`),
    });
    const entry: Entry = {
      settings,
      capacity,
      checkedAt: this.#clock(),
      checking: false,
      cache,
      codec: codecFor(settings, (n) => cache.tryTake(n), this.#encoder),
    };
    this.#entries.set(name, entry);
    return entry;
  }

  #capacityOf(settings: SequenceSettings): CapacityTracker {
    const { name, maxId } = settings;
    return new CapacityTracker(maxId, this.#clock, (status) => this.#logger.warn({ sequence: name, ...status }, `sequence ${name} is ${status.level}: ${status.usedPercent}% of maxId ${maxId} used`));
  }

  /** The sequence's maxId grew: this process serves up to it from now on (lanes and cache reopen). */
  #adopt(entry: Entry, settings: SequenceSettings): void {
    const highest = entry.capacity.status()?.highestId;
    entry.settings = settings;
    entry.capacity = this.#capacityOf(settings);
    if (highest !== undefined) entry.capacity.observe(BigInt(highest));
    entry.cache.reopen();
    this.#allocator.reopen(settings.name);
    this.#logger.info({ sequence: settings.name, maxId: settings.maxId }, `sequence ${settings.name} widened to maxId ${settings.maxId}`);
  }

  /**
   * Reads the sequence from the backends afresh and follows what changed: retired on any backend
   * that answered (this process drops it and refuses it from now on), or a larger maxId on every one
   * of them (it serves up to the smallest of theirs, the bound every one has).
   */
  async #refresh(entry: Entry): Promise<'retired' | 'widened' | 'same'> {
    const rows = (await this.#allocator.readSequence(entry.settings.name)).flatMap((a) => (a.ok && a.value !== undefined ? [a.value] : []));
    entry.checkedAt = this.#clock();
    if (rows.some((r) => r.retired === true)) {
      this.#drop(entry);
      return 'retired';
    }
    if (rows.length === 0 || !rows.every((r) => sameButMaxId(r, entry.settings))) return 'same';
    const maxId = rows.reduce((least, r) => (r.maxId < least ? r.maxId : least), rows[0]!.maxId);
    if (maxId <= entry.settings.maxId) return 'same';
    this.#adopt(entry, { ...entry.settings, maxId });
    return 'widened';
  }

  /**
   * Every SETTINGS_RECHECK_MS a sequence served from memory is read again, in the background: a
   * process holding cached blocks of a sequence retired elsewhere stops within that time.
   */
  #checkDue(entry: Entry): void {
    if (entry.checking || this.#clock() - entry.checkedAt < SETTINGS_RECHECK_MS) return;
    entry.checking = true;
    void this.#refresh(entry)
      .catch(() => undefined)
      .finally(() => {
        entry.checking = false;
        entry.checkedAt = this.#clock();
      });
  }

  /** A retired sequence: its cache is dropped (a gap, never a repeat) and it is refused from now on. */
  #drop(entry: Entry): SequenceRetiredError {
    const name = entry.settings.name;
    const retired = new SequenceRetiredError(`sequence ${name} was retired: nothing of it is issued again, and its name is not created again`);
    if (this.#entries.get(name) === entry) this.#entries.delete(name);
    this.#remember(name, retired);
    return retired;
  }

  #remember(name: string, error: TicketdError): void {
    this.#refused.delete(name);
    // Oldest first: a flood of random names cannot grow this without bound.
    if (this.#refused.size >= MAX_UNKNOWN_SEQUENCES) this.#refused.delete(this.#refused.keys().next().value!);
    this.#refused.set(name, { at: this.#clock(), error });
  }

  /** Fetches ranges for a sequence and keeps its capacity view up to date. */
  async #fetch(entry: Entry, tickets: number, late: (ranges: IdRange[]) => void = () => undefined, widenedOnce = false): Promise<IdRange[]> {
    const observe = (ranges: IdRange[]): void => {
      for (const r of ranges) entry.capacity.observe(r.last);
    };
    try {
      const ranges = await this.#allocator.fetchRanges(entry.settings, tickets, (more) => {
        observe(more);
        late(more);
      });
      observe(ranges);
      return ranges;
    } catch (error) {
      if (error instanceof SequenceExhaustedError && !widenedOnce) {
        // No backend gave a ticket: the sequence may have been widened (PATCH) or retired (DELETE), from any process.
        const now = await this.#refresh(entry);
        if (now === 'widened') return this.#fetch(entry, tickets, late, true);
        if (now === 'retired') throw this.#drop(entry);
      }
      if (error instanceof SequenceExhaustedError) entry.capacity.markExhausted();
      // Why no backend issued names tickets: not for an opaque sequence's clients (the log and the admin's detail keep it).
      if (error instanceof BackendsUnavailableError && entry.settings.ids === 'opaque') {
        const name = entry.settings.name;
        throw new BackendsUnavailableError(`no backend issued a ticket for sequence ${name}; the admin's GET /v1/sequences/${name} says why`, { retryAfterSeconds: error.retryAfterSeconds, cause: error });
      }
      throw error;
    }
  }

  /**
   * Creates the sequence on every backend (Allocator.createSequence). Returns true when it was
   * created anywhere now, false when every backend already had it.
   */
  async createSequence(requested: SequenceSettings): Promise<boolean> {
    this.#refused.delete(requested.name);
    return this.#allocator.createSequence(requested);
  }

  /**
   * Raises an ordered sequence's maxId on every backend (core/widening.ts), then serves up to it
   * here. Returns the settings as they now are. A backend down: 503, and a repeat completes it.
   */
  async widen(name: string, maxId: bigint): Promise<SequenceSettings> {
    const entry = await this.#entry(name);
    // Judged against what the backends hold, not this process's copy: another may have widened it.
    if ((await this.#refresh(entry)) === 'retired') throw this.#drop(entry);
    if (judgeWidening(entry.settings, maxId)) await this.#allocator.widenSequence(name, maxId);
    if (maxId > entry.settings.maxId) this.#adopt(entry, { ...entry.settings, maxId });
    return entry.settings;
  }

  /**
   * Retires the sequence on every backend, for good (Allocator.retireSequence); repeating it on a
   * retired one completes what a backend that did not answer left. Returns its settings.
   */
  async retire(name: string): Promise<SequenceSettings> {
    assertSequenceName(name);
    const answers = await this.#allocator.readSequence(name);
    const row = answers.flatMap((a) => (a.ok && a.value !== undefined ? [a.value] : []))[0];
    if (row === undefined) {
      if (answers.every((a) => !a.ok)) throw new BackendsUnavailableError(`no backend answered while looking up sequence ${name}`);
      throw new SequenceNotFoundError(`sequence ${name} does not exist`);
    }
    const needs = newerNeeded(row);
    if (needs !== undefined) throw new UpgradeRequiredError(`sequence ${name} needs ticketd ${needs} or later; this process is ${THIS_VERSION} and leaves it as it is`);
    await this.#allocator.retireSequence(row);
    const entry = this.#entries.get(name);
    if (entry !== undefined) this.#drop(entry);
    else this.#remember(name, new SequenceRetiredError(`sequence ${name} was retired: nothing of it is issued again, and its name is not created again`));
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
  cacheStatus(name: string): { available: number; issued: number; ticketsPerRefill: number; exhausted: boolean } | undefined {
    const entry = this.#entries.get(name);
    if (entry === undefined) return undefined;
    const { cache } = entry;
    return { available: available(entry), issued: issued(entry), ticketsPerRefill: cache.ticketsPerRefill, exhausted: cache.exhausted };
  }

  /** How much of the sequence's maxId is used, as far as this process has seen; undefined before. */
  capacityStatus(name: string): CapacityStatus | undefined {
    return this.#entries.get(name)?.capacity.status();
  }

  /** Settings of a sequence this process has served; undefined for others. */
  servedSettings(name: string): SequenceSettings | undefined {
    return this.#entries.get(name)?.settings;
  }

  /** IDs handed out by this process so far, over the sequences `counted` admits (default: every one). */
  issuedTotal(counted: (sequence: string) => boolean = () => true): number {
    let total = 0;
    for (const [name, entry] of this.#entries) if (counted(name)) total += issued(entry);
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
    return [...this.#entries.values()].some((e) => available(e) > 0);
  }

  /** Releases the backend pools. */
  async close(): Promise<void> {
    this.#episodes.close();
    await this.#encoder.close();
    await this.#allocator.close();
  }
}

// IDs an opaque sequence encoded ahead have left the cache but not this process: they count as
// cached, not as issued.

/** IDs this process holds for the sequence and has not handed out. */
function available(entry: Entry): number {
  return entry.cache.available + entry.codec.ahead;
}

/** IDs this process has handed out for the sequence. */
function issued(entry: Entry): number {
  return entry.cache.issued - entry.codec.ahead;
}
