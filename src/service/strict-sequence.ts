/**
 * One strict sequence in this process (core/strict.ts has the rules): it leads, serving from the
 * bound it holds on a majority, or it forwards to the leader, coalescing what waits; with neither
 * it asks the backends for the lease. Nothing is served past the lease or above the bound.
 */
import type { Allocator } from '../allocator/allocator.js';
import type { Answer } from '../allocator/key-agreement.js';
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
  STRICT_WAIT_MS,
  type LeaderSeen,
  type StrictRow,
} from '../core/strict.js';
import { BackendsUnavailableError, NotLeaderError, SequenceExhaustedError } from '../errors.js';
import type { Logger } from '../logger.js';
import { errorText } from '../util/error-text.js';
import { ForwardRefusedError } from './strict-forwarder.js';

/** What a strict sequence counts (metrics.ts). */
export interface StrictEvents {
  /** This process became leader (true) or stopped leading (false). */
  leadership(sequence: string, leading: boolean): void;
  /** A call forwarded to the leader, and how many requests it carried. */
  forwarded(sequence: string, requests: number): void;
  /** A bound write (grant or renewal) that reached a majority, or did not. */
  boundWrite(sequence: string, ok: boolean): void;
  /** How long a request waited for a leader before it was served. */
  stalled(sequence: string, seconds: number): void;
}

/** Forwards a request to the leader: its range, or 'not-leader' when that process does not lead. */
export type ForwardRange = (url: string, sequence: string, count: number, authorization: string | undefined) => Promise<IdRange | 'not-leader'>;

/** What a strict sequence needs. */
export interface StrictSequenceOptions {
  readonly allocator: Allocator;
  /** This process's leader ID: unique per process start. */
  readonly instance: string;
  /** Where other front ends reach this process (known once it listens). */
  readonly url: () => string;
  readonly forward: ForwardRange;
  /** The largest count one forwarded call carries. */
  readonly maxCount: number;
  readonly logger: Logger;
  readonly events: StrictEvents;
  readonly monotonicMs?: () => number;
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

/** Requests waiting for one forwarded call. */
interface Waiting {
  readonly count: number;
  readonly resolve: (range: IdRange) => void;
  readonly reject: (error: unknown) => void;
}

/** How long a leader keeps its lease without a request before it lets it go. */
const IDLE_RESIGN_MS = 60_000;

/** A strict sequence in this process. */
export class StrictSequence {
  readonly #settings: SequenceSettings;
  readonly #o: StrictSequenceOptions;
  readonly #mono: () => number;
  #leading: Leading | undefined;
  /** The leader another process is, as last read; undefined when unknown. */
  #seen: LeaderSeen | undefined;
  #electing: Promise<void> | undefined;
  #writing: Promise<boolean> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastRequest = 0;
  #closed = false;
  /** Forwarded calls in flight and the requests waiting for the next, by credential. */
  readonly #queues = new Map<string, { inFlight: number; waiting: Waiting[] }>();

  constructor(settings: SequenceSettings, options: StrictSequenceOptions) {
    this.#settings = settings;
    this.#o = options;
    this.#mono = options.monotonicMs ?? (() => performance.now());
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

  /** `count` IDs: from this process as leader, or from the leader; `forwarded` requests are only served as leader. */
  async take(count: number, authorization: string | undefined, forwarded = false): Promise<IdRange> {
    const started = this.#mono();
    const deadline = started + STRICT_WAIT_MS;
    let lastProblem = 'no leader answered';
    for (let attempt = 0; ; attempt++) {
      const taken = await this.#takeAsLeader(count);
      if (taken !== undefined) return this.#served(taken, started, attempt);
      if (forwarded) throw new NotLeaderError(`this process does not lead strict sequence ${this.#settings.name}${this.#seen === undefined ? '' : ` (epoch ${this.#seen.epoch} is led from ${this.#seen.leaderUrl})`}`);
      if (this.#seen !== undefined && this.#seen.leader !== this.#o.instance) {
        const seen = this.#seen;
        try {
          return this.#served(await this.#forward(seen.leaderUrl, count, authorization), started, attempt);
        } catch (error) {
          // The leader's own refusal (a client token, an exhausted or retired sequence) is the answer.
          if (error instanceof ForwardRefusedError && error.status < 500) throw error;
          lastProblem = `the leader at ${seen.leaderUrl} (epoch ${seen.epoch}): ${errorText(error)}`;
          if (this.#seen === seen) this.#seen = undefined;
        }
      } else {
        try {
          await this.#elect();
          continue;
        } catch (error) {
          if (error instanceof BackendsUnavailableError) throw error;
          lastProblem = errorText(error);
        }
      }
      if (this.#mono() > deadline) {
        throw new BackendsUnavailableError(`no leader of strict sequence ${this.#settings.name} served within ${STRICT_WAIT_MS} ms: ${lastProblem}`, { retryAfterSeconds: 1 });
      }
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 80));
    }
  }

  /** Stops renewing and gives the lease back, so another front end leads at once. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const leading = this.#leading;
    this.#leading = undefined;
    for (const queue of this.#queues.values()) for (const w of queue.waiting.splice(0)) w.reject(new BackendsUnavailableError('ticketd is stopping'));
    if (leading !== undefined) await this.#resign(leading);
  }

  #served(range: IdRange, started: number, attempt: number): IdRange {
    if (attempt > 0) this.#o.events.stalled(this.#settings.name, (this.#mono() - started) / 1000);
    return range;
  }

  #servable(): boolean {
    const leading = this.#leading;
    return leading !== undefined && (this.#o.unfenced === true || this.#mono() < leading.until);
  }

  /** Serves as leader, raising the bound first when it must; undefined when this process does not lead. */
  async #takeAsLeader(count: number): Promise<IdRange | undefined> {
    for (;;) {
      const ready = this.tryTake(count);
      if (ready !== undefined) return ready;
      const leading = this.#leading;
      if (leading === undefined) return undefined;
      if (this.#servable() && leading.next > this.#settings.maxId) {
        throw new SequenceExhaustedError(`strict sequence ${this.#settings.name} has issued every ID up to its maxId ${this.#settings.maxId}`);
      }
      if (this.#servable() && leading.next + BigInt(count) - 1n > this.#settings.maxId) {
        throw new SequenceExhaustedError(`strict sequence ${this.#settings.name} has ${this.#settings.maxId - leading.next + 1n} IDs left below its maxId, fewer than ${count}`);
      }
      // Below the bound but past the lease, or above the bound: one write settles both.
      if (!(await this.#raise(leading, BigInt(count)))) return undefined;
    }
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
    const answers = await this.#o.allocator.onStrictStores((s) => s.extend(name, leading.epoch, this.#o.instance, target));
    const ok = answers.filter((a) => a.ok && a.value).length >= majority(answers.length);
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
    if (this.#o.unfenced !== true && this.#mono() >= leading.until) this.#stopLeading(`its lease could not be renewed on a majority of the backends (${failures(answers)})`);
    return false;
  }

  #stopLeading(why: string): void {
    if (this.#leading === undefined) return;
    this.#leading = undefined;
    clearTimeout(this.#timer);
    this.#o.events.leadership(this.#settings.name, false);
    this.#o.logger.warn({ sequence: this.#settings.name }, `stopped leading strict sequence ${this.#settings.name}: ${why}`);
  }

  #elect(): Promise<void> {
    if (this.#electing === undefined) {
      this.#electing = this.#runElection().finally(() => (this.#electing = undefined));
    }
    return this.#electing;
  }

  /** Reads the lease rows; follows a live leader, or asks for the next epoch on every backend. */
  async #runElection(): Promise<void> {
    const { name, startAfter } = this.#settings;
    const reads = await this.#o.allocator.onStrictStores((s) => s.read(name));
    const rows = reads.flatMap((a) => (a.ok && a.value !== undefined ? [a.value] : []));
    const need = majority(reads.length);
    if (reads.filter((a) => a.ok).length < need) {
      throw new BackendsUnavailableError(`strict sequence ${name} needs a majority of the backends (${need} of ${reads.length}) and fewer answered: ${failures(reads)}`, { retryAfterSeconds: 1 });
    }
    const live = liveLeader(rows);
    if (live !== undefined && live.leader !== this.#o.instance) {
      this.#seen = live;
      return;
    }
    const epoch = nextEpoch(rows);
    const sent = this.#mono();
    const takes = await this.#o.allocator.onStrictStores((s) => s.take(name, epoch, this.#o.instance, this.#o.url(), startAfter));
    const won: StrictRow[] = takes.flatMap((a) => (a.ok && a.value.won ? [a.value.row] : []));
    if (won.length < need) {
      // A minority's grant would only hold the others off until it expires: give it back.
      if (won.length > 0) await this.#o.allocator.onStrictStores((s) => s.resign(name, epoch, this.#o.instance));
      const other = liveLeader(takes.flatMap((a) => (a.ok ? [a.value.row] : [])));
      if (other !== undefined && other.leader !== this.#o.instance) this.#seen = other;
      throw new Error(`epoch ${epoch} of strict sequence ${name} was granted by ${won.length} of ${takes.length} backends, not a majority (${failures(takes)})`);
    }
    const start = startAbove(won.map((r) => r.bound), startAfter);
    const leading: Leading = { epoch, next: start + 1n, bound: start, until: servesUntil(sent), step: MIN_STRICT_STEP, raisedAt: this.#mono() };
    this.#leading = leading;
    this.#seen = { epoch, leader: this.#o.instance, leaderUrl: this.#o.url() };
    this.#lastRequest = this.#mono();
    this.#o.events.leadership(name, true);
    this.#o.logger.info({ sequence: name, epoch: String(epoch) }, `leading strict sequence ${name} from epoch ${epoch}, above ${start}`);
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
    this.#timer.unref?.();
  }

  async #resign(leading: Leading): Promise<void> {
    await this.#o.allocator.onStrictStores((s) => s.resign(this.#settings.name, leading.epoch, this.#o.instance)).catch(() => undefined);
  }

  /** Joins the next forwarded call to `url` for this credential (two in flight at most). */
  #forward(url: string, count: number, authorization: string | undefined): Promise<IdRange> {
    const key = `${url} ${authorization ?? ''}`;
    let queue = this.#queues.get(key);
    if (queue === undefined) {
      queue = { inFlight: 0, waiting: [] };
      this.#queues.set(key, queue);
    }
    const promise = new Promise<IdRange>((resolve, reject) => queue.waiting.push({ count, resolve, reject }));
    this.#pump(key, queue, url, authorization);
    return promise;
  }

  #pump(key: string, queue: { inFlight: number; waiting: Waiting[] }, url: string, authorization: string | undefined): void {
    while (queue.inFlight < 2 && queue.waiting.length > 0) {
      const batch: Waiting[] = [];
      let total = 0;
      while (queue.waiting.length > 0 && total + queue.waiting[0]!.count <= this.#o.maxCount) {
        const w = queue.waiting.shift()!;
        batch.push(w);
        total += w.count;
      }
      queue.inFlight++;
      this.#o.events.forwarded(this.#settings.name, batch.length);
      void this.#o
        .forward(url, this.#settings.name, total, authorization)
        .then(
          (answer) => {
            if (answer === 'not-leader') throw new NotLeaderError(`${url} does not lead strict sequence ${this.#settings.name}`);
            if (answer.last - answer.first + 1n !== BigInt(total)) throw new Error(`the leader at ${url} answered ${answer.last - answer.first + 1n} IDs for ${total}`);
            // Split in the order the requests came: each answer's IDs increase, and every request was sent before the leader took them.
            let next = answer.first;
            for (const w of batch) {
              w.resolve({ first: next, last: next + BigInt(w.count) - 1n });
              next += BigInt(w.count);
            }
          },
        )
        .catch((error: unknown) => {
          for (const w of batch) w.reject(error);
        })
        .finally(() => {
          queue.inFlight--;
          if (queue.inFlight === 0 && queue.waiting.length === 0) this.#queues.delete(key);
          else this.#pump(key, queue, url, authorization);
        });
    }
  }
}

function failures<T>(answers: readonly Answer<T>[]): string {
  const failed = answers.flatMap((a) => (a.ok ? [] : [`${a.backend}: ${errorText(a.error)}`]));
  return failed.length === 0 ? 'every backend answered' : failed.join('; ');
}
