/**
 * One strict sequence in this process (core/strict.ts has the rules): a request is served by this
 * process as leader (strict-leader.ts), or forwarded to the leader (strict-forward-queue.ts); with
 * neither, the backends are asked who leads, until a leader serves or STRICT_WAIT_MS has passed.
 */
import type { Allocator } from '../allocator/allocator.js';
import type { IdRange } from '../core/blocks.js';
import type { SequenceSettings } from '../core/sequence.js';
import { STRICT_WAIT_MS } from '../core/strict.js';
import { BackendsUnavailableError, NotLeaderError } from '../core/errors.js';
import type { Logger } from '../logger.js';
import { errorText } from '../util/error-text.js';
import type { StrictEvents } from './strict-events.js';
import { ForwardQueue } from './strict-forward-queue.js';
import { ForwardRefusedError, type ForwardRange } from './strict-forwarder.js';
import { StrictLeader } from './strict-leader.js';

export type { StrictEvents } from './strict-events.js';

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

/** A strict sequence in this process. */
export class StrictSequence {
  readonly #settings: SequenceSettings;
  readonly #o: StrictSequenceOptions;
  readonly #mono: () => number;
  readonly #leader: StrictLeader;
  readonly #queue: ForwardQueue;

  constructor(settings: SequenceSettings, options: StrictSequenceOptions) {
    this.#settings = settings;
    this.#o = options;
    this.#mono = options.monotonicMs ?? (() => performance.now());
    this.#leader = new StrictLeader(settings, { ...options, monotonicMs: this.#mono });
    this.#queue = new ForwardQueue({
      sequence: settings.name,
      forward: options.forward,
      maxCount: options.maxCount,
      onForwarded: (requests) => options.events.forwarded(settings.name, requests),
    });
  }

  /** `count` IDs at once when this process leads and holds them below its bound; undefined otherwise. */
  tryTake(count: number): IdRange | undefined {
    return this.#leader.tryTake(count);
  }

  /** `count` IDs: from this process as leader, or from the leader; `forwarded` requests are only served as leader. */
  async take(count: number, authorization: string | undefined, forwarded = false): Promise<IdRange> {
    const started = this.#mono();
    const deadline = started + STRICT_WAIT_MS;
    let lastProblem: string;
    for (let attempt = 0; ; attempt++) {
      const taken = await this.#leader.take(count);
      if (taken !== undefined) return this.#served(taken, started, attempt);
      const seen = this.#leader.seen;
      if (forwarded)
        throw new NotLeaderError(
          `this process does not lead strict sequence ${this.#settings.name}${seen === undefined ? '' : ` (epoch ${seen.epoch} is led from ${seen.leaderUrl})`}`,
        );
      if (seen !== undefined && seen.leader !== this.#o.instance) {
        try {
          return this.#served(await this.#queue.forward(seen.leaderUrl, count, authorization), started, attempt);
        } catch (error) {
          // The leader's own refusal (a client token, an exhausted or retired sequence) is the answer.
          if (error instanceof ForwardRefusedError && error.status < 500) throw error;
          lastProblem = `the leader at ${seen.leaderUrl} (epoch ${seen.epoch}): ${errorText(error)}`;
          this.#leader.forget(seen);
        }
      } else {
        try {
          await this.#leader.elect();
          continue;
        } catch (error) {
          if (error instanceof BackendsUnavailableError) throw error;
          lastProblem = errorText(error);
        }
      }
      if (this.#mono() > deadline) {
        throw new BackendsUnavailableError(
          `no leader of strict sequence ${this.#settings.name} served within ${STRICT_WAIT_MS} ms: ${lastProblem}`,
          { retryAfterSeconds: 1 },
        );
      }
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 80));
    }
  }

  /** Stops renewing and gives the lease back, so another front end leads at once. */
  async close(): Promise<void> {
    const leaving = this.#leader.close();
    this.#queue.rejectWaiting(new BackendsUnavailableError('ticketd is stopping'));
    await leaving;
  }

  #served(range: IdRange, started: number, attempt: number): IdRange {
    if (attempt > 0) this.#o.events.stalled(this.#settings.name, (this.#mono() - started) / 1000);
    return range;
  }
}
