/**
 * A worker thread that applies opaque sequences' permutations and writes the results as JSON
 * strings, so the thread answering requests only copies the IDs it hands out: the permutation
 * costs about nine AES blocks per ID, and writing 20 digits as much again, together more than the
 * rest of a batch request. One thread per process, started on first use and shared by every opaque
 * sequence. It computes and writes P and nothing else (encoder-worker.ts): which ordered IDs it
 * gets, and where the results go, stays with the caller (opaque-ids.ts), so it cannot hand an ID
 * out twice.
 */
import { Worker } from 'node:worker_threads';
import type { IdDomain, PermutationScheme } from 'ticketd-client';
import type { IdRange } from '../core/blocks.js';
import type { QuotedIds } from '../util/decimal.js';
import type { EncodedMessage, EncodeMessage, PermutationMessage } from './encoder-worker.js';

/** What the thread needs of a sequence: its key, domain and scheme. */
export interface Permutable {
  readonly name: string;
  readonly key: Uint8Array;
  readonly domain: IdDomain;
  readonly scheme: PermutationScheme;
}

/** Encodes ranges on the worker thread; a failed thread fails what it held and every later call. */
export class EncoderThread {
  #worker: Worker | undefined;
  #failed: Error | undefined;
  #closed = false;
  #nextId = 0;
  readonly #pending = new Map<number, { resolve(out: QuotedIds): void; reject(error: Error): void }>();
  readonly #known = new Set<string>();
  readonly #onFailure: (error: Error) => void;

  /** `onFailure` hears once why the thread stopped working (not when it was closed). */
  constructor(onFailure: (error: Error) => void = () => undefined) {
    this.#onFailure = onFailure;
  }

  /** P of every ID of the ranges, in order, computed and written as JSON strings on the thread. */
  encode(sequence: Permutable, ranges: readonly IdRange[]): Promise<QuotedIds> {
    if (this.#failed !== undefined) return Promise.reject(this.#failed);
    const runs = ranges.map((r) => [r.first, Number(r.last - r.first + 1n)] as const);
    const total = runs.reduce((n, [, count]) => n + count, 0);
    return new Promise((resolve, reject) => {
      // Whatever fails here (no thread, no client package) fails this call and the later ones, never the caller's thread.
      try {
        const worker = this.#start();
        if (!this.#known.has(sequence.name)) {
          const permutation: PermutationMessage = {
            kind: 'permutation',
            name: sequence.name,
            key: sequence.key,
            domain: sequence.domain,
            scheme: sequence.scheme,
          };
          worker.postMessage(permutation);
          this.#known.add(sequence.name);
        }
        const id = this.#nextId++;
        this.#pending.set(id, { resolve, reject });
        const message: EncodeMessage = { kind: 'encode', id, name: sequence.name, runs, total };
        worker.postMessage(message);
      } catch (error) {
        const failed = error instanceof Error ? error : new Error(String(error));
        this.#fail(failed);
        // The first failure is the one every call is told (#fail keeps it).
        reject(this.#failed ?? failed);
      }
    });
  }

  /** Stops the thread; what it held is given up (a gap, never a repeat). */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#closed = true;
    this.#fail(new Error('the encoder thread was closed'));
    await worker?.terminate();
  }

  #start(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = new Worker(workerFile());
    // It must not keep a process alive that has nothing else to do.
    worker.unref();
    worker.on('message', (m: EncodedMessage) => {
      const waiting = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      waiting?.resolve({ bytes: m.bytes, starts: m.starts });
    });
    worker.on('error', (error) => this.#fail(error));
    worker.on('exit', (code) => this.#fail(new Error(`the encoder thread exited with code ${code}`)));
    this.#worker = worker;
    return worker;
  }

  #fail(error: Error): void {
    if (this.#failed === undefined && !this.#closed) this.#onFailure(error);
    this.#failed ??= error;
    this.#worker = undefined;
    for (const waiting of this.#pending.values()) waiting.reject(this.#failed);
    this.#pending.clear();
  }
}

/**
 * The worker's built module beside this one. Under jest, which runs this file from its TypeScript
 * source, that is the build in dist/ (npm test builds first): a thread cannot run TypeScript.
 */
function workerFile(): URL {
  const here = import.meta.url;
  return here.endsWith('.ts')
    ? new URL(here.replace(/\/src\/service\/encoder-thread\.ts$/, '/dist/service/encoder-worker.js'))
    : new URL('./encoder-worker.js', here);
}
