/** Real processes minting Snowflake IDs (snowflake-holder.mjs), and the checks on what they wrote. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DEFAULT_LAYOUT, DEFAULT_SNOWFLAKE_EPOCH_MS } from '../../packages/client/src/snowflake-layout.js';

const HOLDER = fileURLToPath(new URL('./snowflake-holder.mjs', import.meta.url));
const SEQUENCE_AND_WORKER_BITS = BigInt(DEFAULT_LAYOUT.workerBits + DEFAULT_LAYOUT.sequenceBits);
const WORKER_MASK = (1n << BigInt(DEFAULT_LAYOUT.workerBits)) - 1n;

/** One event line a holder printed. */
export interface HolderEvent {
  readonly name: string;
  readonly at: number;
  readonly type: string;
  readonly [key: string]: unknown;
}

/** A running holder process. */
export interface Holder {
  readonly name: string;
  readonly process: ChildProcess;
  readonly events: HolderEvent[];
  /** Resolves with the exit code (null after a signal). */
  readonly exited: Promise<number | null>;
  /** Signals the holder (and faketime around it, if any): SIGSTOP, SIGCONT, SIGKILL. */
  signal(signal: NodeJS.Signals): void;
  /** Resolves at the first event of a type (after `since`, a time in ms). */
  waitFor(type: string, timeoutMs?: number, since?: number): Promise<HolderEvent>;
  /** SIGTERM: it closes its generator (releasing the lease) and exits. */
  stop(): Promise<void>;
}

/**
 * Starts a holder; `clockOffset` runs it under faketime with that offset of its wall clock (faketime's syntax: '+3', '-0.2').
 * `command`: another client's holder program with the same arguments and output (clients/python/conformance/snowflake_holder.py);
 * `more`: the arguments after idsPerTick (the mode, `sync` or `next`, and leaseWaitMs).
 */
export function spawnHolder(
  dir: string,
  name: string,
  pool: string,
  urls: readonly string[],
  options: { clockOffset?: string; idsPerTick?: number; command?: readonly string[]; more?: readonly string[] } = {},
): Holder {
  const [program, ...leading] = options.command ?? [process.execPath, HOLDER];
  const args = [
    ...leading,
    dir,
    name,
    pool,
    urls.join(','),
    String(options.idsPerTick ?? 200),
    ...(options.more ?? []),
  ];
  // A process group of its own: faketime runs node as its child, and a signal must reach both.
  const child =
    options.clockOffset === undefined
      ? spawn(program!, args, { stdio: ['ignore', 'pipe', 'inherit'], detached: true })
      : spawn('faketime', ['-f', options.clockOffset, program!, ...args], {
          stdio: ['ignore', 'pipe', 'inherit'],
          detached: true,
          env: { ...process.env, FAKETIME_DONT_FAKE_MONOTONIC: '1' },
        });
  // Done when its output closes: faketime's child has then exited too.
  const exited = new Promise<number | null>((done) =>
    child.stdout.once('close', () =>
      child.exitCode !== null || child.signalCode !== null
        ? done(child.exitCode)
        : child.once('exit', (code) => done(code)),
    ),
  );
  const { signal, events, waitFor } = followHolder(`holder ${name}`, child, 15_000);
  return {
    name,
    process: child,
    events,
    exited,
    signal,
    waitFor,
    stop: async () => {
      signal('SIGCONT');
      signal('SIGTERM');
      await exited;
    },
  };
}

/** The IDs one lease minted, as a holder wrote them. */
export interface LeaseFile {
  readonly holder: string;
  readonly workerId: number;
  readonly epoch: bigint;
  readonly ids: BigUint64Array;
}

/** Every lease file in `dir`. */
export function readLeaseFiles(dir: string): LeaseFile[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ids'))
    .map((f) => {
      const [holder, worker, epoch] = f.split('.');
      const bytes = readFileSync(join(dir, f));
      const ids = new BigUint64Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 8));
      return { holder: holder!, workerId: Number(worker), epoch: BigInt(epoch!), ids: BigUint64Array.from(ids) };
    });
}

/** IDs that occur more than once across all files, and how many IDs there were. */
export function repeatedIds(files: readonly LeaseFile[]): { total: number; repeats: bigint[] } {
  const total = files.reduce((n, f) => n + f.ids.length, 0);
  const all = new BigUint64Array(total);
  let at = 0;
  for (const f of files) {
    all.set(f.ids, at);
    at += f.ids.length;
  }
  all.sort();
  const repeats: bigint[] = [];
  for (let i = 1; i < all.length; i++) if (all[i] === all[i - 1]) repeats.push(all[i]!);
  return { total, repeats };
}

/** Milliseconds (Unix) of an ID in the default layout and epoch. */
export function timestampOf(id: bigint): number {
  return Number(id >> SEQUENCE_AND_WORKER_BITS) + DEFAULT_SNOWFLAKE_EPOCH_MS;
}

/**
 * Pairs of leases of one worker ID whose minted timestamps overlap: two holders that used the
 * worker ID at the same time. Each lease's IDs must also carry its own worker ID.
 */
export function overlappingLeases(files: readonly LeaseFile[]): string[] {
  const problems: string[] = [];
  const spans = files
    .filter((f) => f.ids.length > 0)
    .map((f) => {
      let min = Number.POSITIVE_INFINITY;
      let max = 0;
      for (const id of f.ids) {
        if (Number((id >> BigInt(DEFAULT_LAYOUT.sequenceBits)) & WORKER_MASK) !== f.workerId)
          problems.push(`${f.holder} wrote an ID of another worker than ${f.workerId} into its lease`);
        const t = timestampOf(id);
        if (t < min) min = t;
        if (t > max) max = t;
      }
      return { ...f, min, max };
    });
  for (let i = 0; i < spans.length; i++) {
    for (let j = i + 1; j < spans.length; j++) {
      const a = spans[i]!;
      const b = spans[j]!;
      if (a.workerId === b.workerId && a.min <= b.max && b.min <= a.max) {
        problems.push(
          `worker ${a.workerId}: ${a.holder} (epoch ${a.epoch}, ${a.min}..${a.max}) and ${b.holder} (epoch ${b.epoch}, ${b.min}..${b.max}) overlap`,
        );
      }
    }
  }
  return problems;
}

/**
 * What a holder process prints (one JSON event a line on stdout), and how to signal it (its whole
 * process group) and wait for an event. `what` names it in a timeout's message, with `more()` after;
 * `other` takes the lines that are not events.
 */
export function followHolder(
  what: string,
  child: ChildProcess,
  defaultTimeoutMs: number,
  more: () => string = () => '',
  other: (line: string) => void = () => undefined,
): Pick<Holder, 'events' | 'signal' | 'waitFor'> {
  const signal = (sig: NodeJS.Signals): void => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // The group is gone already.
    }
  };
  const events: HolderEvent[] = [];
  const waiters: (() => void)[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      events.push(JSON.parse(line) as HolderEvent);
    } catch {
      other(line);
      return;
    }
    for (const w of waiters.splice(0)) w();
  });
  const waitFor = (type: string, timeoutMs = defaultTimeoutMs, since = 0): Promise<HolderEvent> =>
    new Promise((done, fail) => {
      const timer = setTimeout(
        () =>
          fail(
            new Error(
              `${what} printed no ${type} event within ${timeoutMs} ms; it printed ${events.map((e) => e.type).join(', ')}${more()}`,
            ),
          ),
        timeoutMs,
      );
      const look = (): void => {
        const found = events.find((e) => e.type === type && e.at >= since);
        if (found !== undefined) {
          clearTimeout(timer);
          done(found);
        } else waiters.push(look);
      };
      look();
    });
  return { signal, events, waitFor };
}
