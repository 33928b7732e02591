/**
 * The sequences this process serves, and their one owner: each is loaded from the backends on first
 * use (once, however many requests ask at the same time), read again every SETTINGS_RECHECK_MS while
 * served, asked for or not (settings-rechecks.ts: a retirement or a widening made elsewhere shows),
 * refilled through the allocator, and dropped when retired.
 */
import type { Allocator } from '../allocator/allocator.js';
import type { Clock } from '../core/clock.js';
import type { IdRange } from '../core/blocks.js';
import { assertSequenceName, type SequenceSettings } from '../core/sequence.js';
import { judgeRows } from '../core/widening.js';
import { BackendsUnavailableError, SequenceExhaustedError, SequenceRetiredError } from '../core/errors.js';
import type { Logger } from '../logger.js';
import { EpisodeLog } from '../util/episode-log.js';
import { errorText } from '../util/error-text.js';
import { EncoderThread } from './encoder-thread.js';
import { RefusedNames } from './refused-names.js';
import { SequenceEntry, SETTINGS_RECHECK_MS } from './sequence-entry.js';
import { SettingsRechecks } from './settings-rechecks.js';
import { resolveSequence, retiredError, rowsOf } from './sequence-rows.js';
import { StrictSequence, type StrictSequenceOptions } from './strict-sequence.js';
import { cachedIssuer, refusingStrictIssuer, strictIssuer, type Issuer } from './issuer.js';
import { reuseAllowed } from '../core/returned-ranges.js';
import { giveBackCaches } from './give-back.js';

/** What every strict sequence of a process shares (strict-sequence.ts). */
export type StrictContext = Omit<StrictSequenceOptions, 'allocator' | 'logger'>;

/** What the served sequences need. */
export interface ServedSequencesOptions {
  readonly allocator: Allocator;
  readonly logger: Logger;
  readonly clock: Clock;
  /** How this process leads or follows strict sequences; without it a strict sequence is refused. */
  readonly strict: StrictContext | undefined;
}

/** What a fresh read of a sequence found: retired, widened or the same; `answered` when any backend did. */
export interface Refreshed {
  readonly kind: 'retired' | 'widened' | 'same';
  readonly answered: boolean;
}

/** The sequences of one process, by name. */
export class ServedSequences {
  readonly #allocator: Allocator;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #entries = new Map<string, SequenceEntry>();
  /** The strict sequences among them, which serve through their leader and never from the cache. */
  readonly #strict = new Map<string, StrictSequence>();
  readonly #strictContext: StrictContext | undefined;
  readonly #resolving = new Map<string, Promise<SequenceEntry>>();
  /** Where opaque sequences' IDs are encoded ahead, off the thread that answers requests. */
  readonly #encoder = new EncoderThread((error) =>
    this.#logger.warn(
      { err: errorText(error) },
      'the encoder thread failed: opaque IDs are encoded on the request thread from now on',
    ),
  );
  readonly #refused: RefusedNames;
  /** Prefetches that fail on every refill while a backend is cut off: one line per episode. */
  readonly #episodes: EpisodeLog;
  readonly #rechecks: SettingsRechecks;

  constructor(options: ServedSequencesOptions) {
    this.#allocator = options.allocator;
    this.#logger = options.logger;
    this.#clock = options.clock;
    this.#episodes = new EpisodeLog(this.#logger, { clock: this.#clock });
    this.#refused = new RefusedNames(this.#clock);
    this.#strictContext = options.strict;
    this.#rechecks = new SettingsRechecks({
      everyMs: SETTINGS_RECHECK_MS,
      clock: this.#clock,
      recheck: (name) => this.#recheck(name),
    });
  }

  /** The sequence if this process has loaded it (and not dropped it); undefined otherwise. */
  loaded(name: string): SequenceEntry | undefined {
    return this.#entries.get(name);
  }

  /** The strict sequence of that name, if this process has loaded one. */
  strict(name: string): StrictSequence | undefined {
    return this.#strict.get(name);
  }

  /** The sequence's cache and settings, loaded from the backends on first use. */
  entry(name: string): SequenceEntry | Promise<SequenceEntry> {
    const known = this.loaded(name);
    if (known !== undefined) return known;
    assertSequenceName(name);
    const refused = this.#refused.recent(name);
    if (refused !== undefined) return Promise.reject(refused);
    const pending = this.#resolving.get(name);
    if (pending !== undefined) return pending;
    const resolving = this.#load(name).finally(() => this.#resolving.delete(name));
    this.#resolving.set(name, resolving);
    return resolving;
  }

  /**
   * Reads the sequence from the backends afresh and follows what changed: retired on any backend
   * that answered (this process drops it and refuses it from now on), or a larger maxId on every one
   * of them (it serves up to the smallest of theirs, the bound every one has).
   */
  async refresh(entry: SequenceEntry): Promise<Refreshed> {
    const answers = await this.#allocator.readSequence(entry.settings.name);
    const verdict = judgeRows(entry.settings, rowsOf(answers));
    if (verdict.kind === 'retired') this.drop(entry.settings.name);
    if (verdict.kind === 'widened') this.adopt(entry, { ...entry.settings, maxId: verdict.maxId });
    return { kind: verdict.kind, answered: answers.some((a) => a.ok) };
  }

  /** The sequence's maxId grew: this process's cache, capacity view and lanes serve up to it. */
  adopt(entry: SequenceEntry, settings: SequenceSettings): void {
    entry.adopt(settings);
    this.#allocator.reopen(settings.name);
  }

  /** A retired sequence: its cache is dropped (a gap, never a repeat) and it is refused from now on. */
  drop(name: string): SequenceRetiredError {
    const retired = retiredError(name);
    this.#entries.delete(name);
    this.#rechecks.forget(name);
    const strict = this.#strict.get(name);
    this.#strict.delete(name);
    void strict?.close();
    this.#refused.remember(name, retired);
    return retired;
  }

  /** Fetches ranges for a sequence and keeps its capacity view up to date. */
  async fetch(
    entry: SequenceEntry,
    tickets: number,
    late: (ranges: IdRange[]) => void = () => undefined,
    widenedOnce = false,
  ): Promise<IdRange[]> {
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
        const now = (await this.refresh(entry)).kind;
        if (now === 'retired') throw this.drop(entry.settings.name);
        // Widened now, or by a recheck that ran while this refill asked at the old bound.
        if (now === 'widened' || entry.settings !== asked) return this.fetch(entry, tickets, late, true);
      }
      if (error instanceof SequenceExhaustedError) entry.markExhausted();
      // Why no backend issued names tickets: not for an opaque sequence's clients (the log and the admin's detail keep it).
      if (error instanceof BackendsUnavailableError && entry.settings.ids === 'opaque') {
        const name = entry.settings.name;
        throw new BackendsUnavailableError(
          `no backend issued a ticket for sequence ${name}; the admin's GET /v1/sequences/${name} says why`,
          { retryAfterSeconds: error.retryAfterSeconds, cause: error },
        );
      }
      throw error;
    }
  }

  /** The name is being created: a refusal remembered for it no longer holds. */
  forgetRefusal(name: string): void {
    this.#refused.forget(name);
  }

  /** Names of the sequences this process found retired (it served or was asked for them). */
  retired(): string[] {
    return this.#refused.retired();
  }

  /** Every sequence this process serves, with its name. */
  all(): IterableIterator<[string, SequenceEntry]> {
    return this.#entries.entries();
  }

  /** Gives back cached IDs (of sequences that take them back) and strict leases, and stops the encoder and the episode log. */
  async close(): Promise<void> {
    this.#rechecks.close();
    await giveBackCaches(this.#allocator, this.#logger, this.#entries.entries());
    await Promise.all([...this.#strict.values()].map((s) => s.close()));
    this.#episodes.close();
    await this.#encoder.close();
  }

  async #load(name: string): Promise<SequenceEntry> {
    const sent = this.#clock();
    const resolved = resolveSequence(name, await this.#allocator.readSequence(name));
    if ('error' in resolved) {
      if (resolved.remember) this.#refused.remember(name, resolved.error);
      throw resolved.error;
    }
    const entry = new SequenceEntry(resolved.settings, {
      clock: this.#clock,
      logger: this.#logger,
      encoder: this.#encoder,
      refill: (e, tickets, late) => this.#refill(e, tickets, late),
      onBackgroundError: (error) =>
        this.#episodes.note(
          `prefetch ${name}`,
          { sequence: name, err: errorText(error) },
          `prefetch of sequence ${name} failed`,
        ),
      issuer: (e) => this.#issuerFor(e),
    });
    this.#entries.set(name, entry);
    this.#rechecks.watch(name, sent);
    return entry;
  }

  /** A cache's refill: IDs given back first where the sequence takes them back, else fresh tickets. */
  async #refill(entry: SequenceEntry, tickets: number, late: (ranges: IdRange[]) => void): Promise<IdRange[]> {
    const { settings } = entry;
    if (reuseAllowed(settings)) {
      const reused = await this.#allocator.returns.reclaim(settings.name, BigInt(tickets) * settings.blockSize);
      if (reused.length > 0) return reused;
    }
    return this.fetch(entry, tickets, late);
  }

  /** The one place a sequence's kind chooses how it issues: strict through its leader, the others from the cache. */
  #issuerFor(entry: SequenceEntry): Issuer {
    const { settings } = entry;
    if (settings.ids !== 'strict') return cachedIssuer(entry.cache, entry.codec, () => this.#leaseBlock(entry));
    if (this.#strictContext === undefined) return refusingStrictIssuer(settings.name);
    const strict = new StrictSequence(settings, {
      ...this.#strictContext,
      allocator: this.#allocator,
      logger: this.#logger,
    });
    this.#strict.set(settings.name, strict);
    return strictIssuer(settings.name, strict);
  }

  /** One fresh ticket's block, past the cache (a client hands its IDs out itself). */
  async #leaseBlock(entry: SequenceEntry): Promise<IdRange> {
    const [block] = await this.fetch(entry, 1);
    if (block === undefined) throw new Error(`a refill of sequence ${entry.settings.name} gave no block`);
    return block;
  }

  /** A timer's read of a served sequence; false once it is no longer served (dropped, retired now). */
  async #recheck(name: string): Promise<boolean> {
    const entry = this.#entries.get(name);
    if (entry === undefined) return false;
    await this.refresh(entry);
    return this.#entries.get(name) === entry;
  }
}
