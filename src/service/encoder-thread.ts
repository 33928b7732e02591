/**
 * A worker thread that applies opaque sequences' permutations, so the thread answering requests
 * only formats the IDs it hands out: the permutation costs about nine AES blocks per ID, as much as
 * the rest of a batch request. One thread per process, started on first use and shared by every
 * opaque sequence. It computes P and nothing else: which ordered IDs it gets, and where the
 * results go, stays with the caller (opaque-ids.ts), so it cannot hand an ID out twice.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { IdDomain, PermutationScheme } from 'ticketd-client';
import type { IdRange } from '../core/blocks.js';

/** The worker's code: CommonJS, loading the client package's build by its absolute path. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { IdPermutation } = require(workerData.client);
const permutations = new Map();
parentPort.on('message', (m) => {
  if (m.kind === 'permutation') {
    permutations.set(m.name, new IdPermutation(m.key, m.domain, m.scheme));
    return;
  }
  const out = new BigUint64Array(m.total);
  let at = 0;
  for (const [first, count] of m.runs) {
    permutations.get(m.name).encodeRun(first, count, out, at);
    at += count;
  }
  parentPort.postMessage({ id: m.id, out }, [out.buffer]);
});
`;

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
  readonly #pending = new Map<number, { resolve(out: BigUint64Array): void; reject(error: Error): void }>();
  readonly #known = new Set<string>();
  readonly #onFailure: (error: Error) => void;

  /** `onFailure` hears once why the thread stopped working (not when it was closed). */
  constructor(onFailure: (error: Error) => void = () => undefined) {
    this.#onFailure = onFailure;
  }

  /** P of every ID of the ranges, in order, computed on the thread. */
  encode(sequence: Permutable, ranges: readonly IdRange[]): Promise<BigUint64Array> {
    if (this.#failed !== undefined) return Promise.reject(this.#failed);
    const runs = ranges.map((r) => [r.first, Number(r.last - r.first + 1n)] as const);
    const total = runs.reduce((n, [, count]) => n + count, 0);
    return new Promise((resolve, reject) => {
      // Whatever fails here (no thread, no client package) fails this call and the later ones, never the caller's thread.
      try {
        const worker = this.#start();
        if (!this.#known.has(sequence.name)) {
          worker.postMessage({ kind: 'permutation', name: sequence.name, key: sequence.key, domain: sequence.domain, scheme: sequence.scheme });
          this.#known.add(sequence.name);
        }
        const id = this.#nextId++;
        this.#pending.set(id, { resolve, reject });
        worker.postMessage({ kind: 'encode', id, name: sequence.name, runs, total });
      } catch (error) {
        this.#fail(error instanceof Error ? error : new Error(String(error)));
        reject(this.#failed);
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
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { client: clientBuild() } });
    // It must not keep a process alive that has nothing else to do.
    worker.unref();
    worker.on('message', (m: { id: number; out: BigUint64Array }) => {
      const waiting = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      waiting?.resolve(m.out);
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
 * The client package's CommonJS build, which the thread loads. Under jest, whose resolver maps the
 * package to its TypeScript source, that is the build beside the source.
 */
function clientBuild(): string {
  const resolved = createRequire(import.meta.url).resolve('ticketd-client');
  return resolved.endsWith('.ts') ? resolved.replace(/src[\\/]index\.ts$/, 'dist/cjs/index.js') : resolved;
}
