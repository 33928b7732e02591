/**
 * A follower's calls to a strict sequence's leader: requests that wait while a call is in flight go
 * together in the next one (two in flight per leader and caller), and each gets its share of
 * the answer in the order it came.
 */
import type { IdRange } from '../core/blocks.js';
import { NotLeaderError } from '../core/errors.js';
import type { ForwardRange } from './strict-forwarder.js';

/** Requests waiting for one forwarded call. */
interface Waiting {
  readonly count: number;
  readonly resolve: (range: IdRange) => void;
  readonly reject: (error: unknown) => void;
}

/** Forwarded calls in flight and the requests waiting for the next. */
interface Queue {
  inFlight: number;
  readonly waiting: Waiting[];
}

/** What a forward queue needs. */
export interface ForwardQueueOptions {
  readonly sequence: string;
  readonly forward: ForwardRange;
  /** The largest count one forwarded call carries. */
  readonly maxCount: number;
  /** A call was sent, carrying this many requests. */
  readonly onForwarded: (requests: number) => void;
}

/** The forwarded calls of one strict sequence, by leader URL and caller. */
export class ForwardQueue {
  readonly #o: ForwardQueueOptions;
  readonly #queues = new Map<string, Queue>();

  constructor(options: ForwardQueueOptions) {
    this.#o = options;
  }

  /** Joins the next forwarded call to `url` for this caller (one caller's name per call, for the leader's audit log). */
  forward(url: string, count: number, callerName: string): Promise<IdRange> {
    const key = `${url} ${callerName}`;
    let queue = this.#queues.get(key);
    if (queue === undefined) {
      queue = { inFlight: 0, waiting: [] };
      this.#queues.set(key, queue);
    }
    const promise = new Promise<IdRange>((resolve, reject) => queue.waiting.push({ count, resolve, reject }));
    this.#pump(key, queue, url, callerName);
    return promise;
  }

  /** Refuses every request still waiting for a call (the process stops). */
  rejectWaiting(error: unknown): void {
    for (const queue of this.#queues.values()) for (const w of queue.waiting.splice(0)) w.reject(error);
  }

  #pump(key: string, queue: Queue, url: string, callerName: string): void {
    const sequence = this.#o.sequence;
    while (queue.inFlight < 2 && queue.waiting.length > 0) {
      const batch: Waiting[] = [];
      let total = 0;
      while (queue.waiting.length > 0 && total + queue.waiting[0]!.count <= this.#o.maxCount) {
        const w = queue.waiting.shift()!;
        batch.push(w);
        total += w.count;
      }
      queue.inFlight++;
      this.#o.onForwarded(batch.length);
      void this.#o
        .forward(url, sequence, total, callerName)
        .then((answer) => {
          if (answer === 'not-leader') throw new NotLeaderError(`${url} does not lead strict sequence ${sequence}`);
          if (answer.last - answer.first + 1n !== BigInt(total))
            throw new Error(`the leader at ${url} answered ${answer.last - answer.first + 1n} IDs for ${total}`);
          // Split in the order the requests came: each answer's IDs increase, and every request was sent before the leader took them.
          let next = answer.first;
          for (const w of batch) {
            w.resolve({ first: next, last: next + BigInt(w.count) - 1n });
            next += BigInt(w.count);
          }
        })
        .catch((error: unknown) => {
          for (const w of batch) w.reject(error);
        })
        .finally(() => {
          queue.inFlight--;
          if (queue.inFlight === 0 && queue.waiting.length === 0) this.#queues.delete(key);
          else this.#pump(key, queue, url, callerName);
        });
    }
  }
}
