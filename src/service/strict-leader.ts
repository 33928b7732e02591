/**
 * The lease and the bound of one strict sequence in this process (core/strict.ts has the rules): it
 * elects itself through the backends or learns who leads, and while it leads it serves from the
 * bound it holds on a majority, renewing and raising it. Nothing is served past the lease or above
 * the bound.
 */
import type { Allocator } from '../allocator/allocator.js';
import type { Answer } from '../allocator/key-agreement.js';
import type { StrictStore, StrictTake } from '../backend/strict-store.js';
import type { IdRange } from '../core/blocks.js';
import type { SequenceSettings } from '../core/sequence.js';
import {
  liveLeader,
  majority,
  MIN_STRICT_STEP,
  nextEpoch,
  nextStep,
  servesUntil,
  startAbove,
  STRICT_RENEW_EVERY_MS,
  type LeaderSeen,
  type StrictRow,
} from '../core/strict.js';
import { BackendsUnavailableError, SequenceExhaustedError } from '../core/errors.js';
import type { Logger } from '../logger.js';
import type { StrictEvents } from './strict-events.js';
import { firstMajority, quorumFailures } from './strict-quorum.js';

/** What the leadership of a strict sequence needs. */
export interface StrictLeaderOptions {
  readonly allocator: Allocator;
  /** This process's leader ID: unique per process start. */
  readonly instance: string;
  /** Where other front ends reach this process (known once it listens). */
  readonly url: () => string;
  readonly logger: Logger;
  readonly events: StrictEvents;
  readonly monotonicMs: () => number;
  /** A planted bug for the checker's own test (docs/strict-sequences.md): serve on after the lease ends. Never set otherwise. */
  readonly unfenced?: boolean;
}

/** What this process holds while it leads. */
interface Leading {
  readonly epoch: bigint;
  /** The next ID to serve. */
  next: bigint;
  /** The bound written to a majority: nothing above it is served. */
  bound: bigint;
  /** This process's monotonic time after which it no longer serves. */
  until: number;
  step: bigint;
  /** When the bound was last raised (to size the next step). */
  raisedAt: number;
}

/** How long a leader keeps its lease without a request before it lets it go. */
const IDLE_RESIGN_MS = 60_000;

/** Leading one strict sequence, or knowing who does. */
export class StrictLeader {
  readonly #settings: SequenceSettings;
  readonly #o: StrictLeaderOptions;
  readonly #mono: () => number;
  #leading: Leading | undefined;
  /** The leader another process is, as last read; undefined when unknown. */
  #seen: LeaderSeen | undefined;
  #electing: Promise<void> | undefined;
  #writing: Promise<boolean> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastRequest = 0;
  #closed = false;
  /** The highest epoch this process has asked for: it never asks for one twice (see #runElection). */
  #triedEpoch = 0n;
  /** Backends whose last lease write has not answered: a hung one is not sent another, so none pile up behind it. */
  readonly #extending = new WeakSet<StrictStore>();

  constructor(settings: SequenceSettings, options: StrictLeaderOptions) {
    this.#settings = settings;
    this.#o = options;
    this.#mono = options.monotonicMs;
  }

  /** Who leads, as this process last learned (itself included); undefined when unknown. */
  get seen(): LeaderSeen | undefined {
    return this.#seen;
  }

  /** That leader did not serve: ask the backends again next time (unless another was learned meanwhile). */
  forget(seen: LeaderSeen): void {
    if (this.#seen === seen) this.#seen = undefined;
  }

  /** `count` IDs at once when this process leads and holds them below its bound; undefined otherwise. */
  tryTake(count: number): IdRange | undefined {
    this.#lastRequest = this.#mono();
    const leading = this.#leading;
    if (leading === undefined || !this.#servable()) return undefined;
    const last = leading.next + BigInt(count) - 1n;
    if (last > leading.bound) return undefined;
    const range = { first: leading.next, last };
    leading.next = last + 1n;
    // Half the step left: raise the bound now, so that requests rarely wait for it.
    if (leading.bound - last < leading.step / 2n) void this.#raise(leading);
    return range;
  }

  /** Serves as leader, raising the bound first when it must; undefined when this process does not lead. */
  async take(count: number): Promise<IdRange | undefined> {
    for (;;) {
      const ready = this.tryTake(count);
      if (ready !== undefined) return ready;
      const leading = this.#leading;
      if (leading === undefined) return undefined;
      if (this.#servable() && leading.next > this.#settings.maxId) {
        throw new SequenceExhaustedError(
          `strict sequence ${this.#settings.name} has issued every ID up to its maxId ${this.#settings.maxId}`,
        );
      }
      if (this.#servable() && leading.next + BigInt(count) - 1n > this.#settings.maxId) {
        throw new SequenceExhaustedError(
          `strict sequence ${this.#settings.name} has ${this.#settings.maxId - leading.next + 1n} IDs left below its maxId, fewer than ${count}`,
        );
      }
      // Below the bound but past the lease, or above the bound: one write settles both.
      if (!(await this.#raise(leading, BigInt(count)))) return undefined;
    }
  }

  /** Reads the lease rows and follows a live leader, or takes the next epoch (single-flight). */
  elect(): Promise<void> {
    if (this.#electing === undefined) {
      this.#electing = this.#runElection().finally(() => (this.#electing = undefined));
    }
    return this.#electing;
  }

  /** Stops renewing and gives the lease back, so another front end leads at once. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const leading = this.#leading;
    this.#leading = undefined;
    if (leading !== undefined) await this.#resign(leading);
  }

  #servable(): boolean {
    const leading = this.#leading;
    return leading !== undefined && (this.#o.unfenced === true || this.#mono() < leading.until);
  }

  /**
   * Renews the lease and raises the bound (single-flight); true when a majority took it. A leader
   * whose lease runs out unrenewed stops leading.
   */
  #raise(leading: Leading, wanted = 0n): Promise<boolean> {
    if (this.#writing !== undefined) return this.#writing;
    const write = this.#write(leading, wanted).finally(() => {
      if (this.#writing === write) this.#writing = undefined;
    });
    this.#writing = write;
    return write;
  }

  async #write(leading: Leading, wanted: bigint): Promise<boolean> {
    if (this.#leading !== leading) return false;
    const name = this.#settings.name;
    const room = leading.bound - leading.next + 1n;
    let target = leading.bound;
    if (room < leading.step / 2n || room < wanted) {
      const now = this.#mono();
      leading.step = nextStep(leading.step, now - leading.raisedAt);
      target = leading.next - 1n + wanted + leading.step;
      if (target > this.#settings.maxId) target = this.#settings.maxId;
    }
    const sent = this.#mono();
    // Settled by the first majority: a hung backend's answer comes later and counts for nothing.
    const quorum = await firstMajority(
      this.#o.allocator.onStrictStores((s) => this.#extendOn(s, leading, target)),
      (a) => a.ok && a.value,
    );
    const ok = quorum.reached;
    this.#o.events.boundWrite(name, ok);
    if (this.#leading !== leading) return false;
    if (ok) {
      leading.until = servesUntil(sent);
      if (target > leading.bound) {
        leading.bound = target;
        leading.raisedAt = this.#mono();
      }
      return true;
    }
    if (this.#o.unfenced !== true && this.#mono() >= leading.until)
      this.#stopLeading(`its lease could not be renewed on a majority of the backends (${quorumFailures(quorum)})`);
    return false;
  }

  #extendOn(store: StrictStore, leading: Leading, target: bigint): Promise<boolean> {
    if (this.#extending.has(store)) {
      return Promise.reject(
        new BackendsUnavailableError(
          `the previous lease write of strict sequence ${this.#settings.name} to this backend has not answered yet`,
        ),
      );
    }
    this.#extending.add(store);
    return store
      .extend(this.#settings.name, leading.epoch, this.#o.instance, target)
      .finally(() => this.#extending.delete(store));
  }

  #stopLeading(why: string): void {
    if (this.#leading === undefined) return;
    this.#leading = undefined;
    clearTimeout(this.#timer);
    this.#o.events.leadership(this.#settings.name, false);
    this.#o.logger.warn(
      { sequence: this.#settings.name },
      `stopped leading strict sequence ${this.#settings.name}: ${why}`,
    );
  }

  async #runElection(): Promise<void> {
    const { name, startAfter } = this.#settings;
    const reads = await firstMajority(
      this.#o.allocator.onStrictStores((s) => s.read(name)),
      (a) => a.ok,
    );
    if (!reads.reached) {
      // Cut off from a majority, this process cannot lead; a backend it reaches may still name a
      // live leader, and forwarding to it is safe: only a leader serves a forwarded call, within its own lease.
      const named = liveLeader(rowsOf(await reads.all));
      if (named !== undefined && named.leader !== this.#o.instance) {
        this.#seen = named;
        return;
      }
      const need = majority(reads.asked);
      throw new BackendsUnavailableError(
        `strict sequence ${name} needs a majority of the backends (${need} of ${reads.asked}) and fewer answered: ${quorumFailures(reads)}`,
        { retryAfterSeconds: 1 },
      );
    }
    const rows = rowsOf(reads.answers);
    const live = liveLeader(rows);
    if (live !== undefined && live.leader !== this.#o.instance) {
      this.#seen = live;
      return;
    }
    // Never the same epoch twice: a late give-back of a failed try (below) then cannot end a lease of a later one.
    const read = nextEpoch(rows);
    const epoch = read > this.#triedEpoch ? read : this.#triedEpoch + 1n;
    this.#triedEpoch = epoch;
    const sent = this.#mono();
    // The first majority of grants makes the leader: it starts above their bounds (core/strict.ts), and a
    // grant that comes later adds a backend that holds this epoch, which changes nothing about that.
    const takes = await firstMajority(
      this.#o.allocator.onStrictStores((s) => s.take(name, epoch, this.#o.instance, this.#o.url(), startAfter)),
      granted,
    );
    const won: StrictRow[] = takes.answers.flatMap((a) => (granted(a) ? [a.value.row] : []));
    if (!takes.reached) {
      // A minority's grant would only hold the others off until it expires: give it back, from the
      // backends that answered now and from any that grants later.
      if (won.length > 0) void this.#resignEpoch(epoch);
      void takes.all.then((every) =>
        every.some((a) => granted(a) && !takes.answers.includes(a)) ? this.#resignEpoch(epoch) : undefined,
      );
      const other = liveLeader(takes.answers.flatMap((a) => (a.ok ? [a.value.row] : [])));
      if (other !== undefined && other.leader !== this.#o.instance) this.#seen = other;
      throw new Error(
        `epoch ${epoch} of strict sequence ${name} was granted by ${won.length} of ${takes.asked} backends, not a majority (${quorumFailures(takes)})`,
      );
    }
    const start = startAbove(
      won.map((r) => r.bound),
      startAfter,
    );
    const leading: Leading = {
      epoch,
      next: start + 1n,
      bound: start,
      until: servesUntil(sent),
      step: MIN_STRICT_STEP,
      raisedAt: this.#mono(),
    };
    this.#leading = leading;
    this.#seen = { epoch, leader: this.#o.instance, leaderUrl: this.#o.url() };
    this.#lastRequest = this.#mono();
    this.#o.events.leadership(name, true);
    this.#o.logger.info(
      { sequence: name, epoch: String(epoch) },
      `leading strict sequence ${name} from epoch ${epoch}, above ${start}`,
    );
    this.#renewLater(leading);
  }

  #renewLater(leading: Leading): void {
    clearTimeout(this.#timer);
    if (this.#closed || this.#leading !== leading) return;
    this.#timer = setTimeout(() => {
      if (this.#leading !== leading) return;
      if (this.#mono() - this.#lastRequest > IDLE_RESIGN_MS) {
        this.#stopLeading(`no request for ${IDLE_RESIGN_MS / 1000} s`);
        void this.#resign(leading);
        return;
      }
      void this.#raise(leading).finally(() => this.#renewLater(leading));
    }, STRICT_RENEW_EVERY_MS);
    this.#timer.unref();
  }

  #resign(leading: Leading): Promise<void> {
    return this.#resignEpoch(leading.epoch);
  }

  /** Ends this process's lease of `epoch` wherever it holds one (fenced by epoch and leader: nothing else changes). */
  async #resignEpoch(epoch: bigint): Promise<void> {
    await Promise.all(
      this.#o.allocator.onStrictStores((s) => s.resign(this.#settings.name, epoch, this.#o.instance)),
    ).catch(() => undefined);
  }
}

function granted(answer: Answer<StrictTake>): answer is Answer<StrictTake> & { readonly ok: true } {
  return answer.ok && answer.value.won;
}

function rowsOf(answers: readonly Answer<StrictRow | undefined>[]): StrictRow[] {
  return answers.flatMap((a) => (a.ok && a.value !== undefined ? [a.value] : []));
}
