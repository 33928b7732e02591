/**
 * Load from each client (Node SDK in this process, Python and Java in processes of their own) on a
 * block sequence, a strict sequence and a Snowflake pool, for tests that restart or replace the
 * front ends under it: every ID and every failure is kept, to be judged by the test.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createSnowflake, createTicketClient, type SnowflakeEvent } from 'ticketd-client';
import { spawnJava, type JavaBuild } from './java-client.js';
import { PYTHON_CLIENT_DIR, pythonEnv } from './python.js';
import type { Holder } from './snowflake-fleet.js';
import { sleep } from './id-ledger.js';

/**
 * The clients' per-request timeout: above their default (2 s), since this 2-core machine runs up to
 * eight suites at once and a front end there may take longer to answer under no fault at all.
 */
const TIMEOUT_MS = 8000;

/** What a load saw: IDs per sequence, failures (calls that threw), and the Snowflake events. */
export interface LoadResult {
  readonly client: string;
  readonly ids: Map<string, bigint[]>;
  readonly failures: string[];
  readonly events: string[];
}

/** A running load: stop() ends it and returns what it saw. */
export interface RunningLoad {
  stop(): Promise<LoadResult>;
}

/** The Node SDK in this process: two callers per sequence (blocks and strict), one Snowflake generator minting with next(). */
export function nodeLoad(urls: readonly string[], sequences: readonly string[], pool: string): RunningLoad {
  const failures: string[] = [];
  const events: string[] = [];
  const ids = new Map<string, bigint[]>(sequences.map((s) => [s, []]));
  let stopping = false;
  const clients = sequences.map((sequence) => createTicketClient({ urls, sequence, timeoutMs: TIMEOUT_MS }));
  const snowflake = createSnowflake({
    urls,
    pool,
    timeoutMs: TIMEOUT_MS,
    holder: 'node-load',
    onEvent: (e: SnowflakeEvent) =>
      events.push(
        ['leased', 'renewed', 'released'].includes(e.type)
          ? e.type
          : `${e.type} at ${Date.now()}: ${JSON.stringify(e)}`,
      ),
  });
  const flakes: bigint[] = [];
  ids.set(`snowflake:${pool}`, flakes);
  const loop = async (next: () => Promise<bigint>, into: bigint[]): Promise<void> => {
    while (!stopping) {
      try {
        into.push(await next());
      } catch (error) {
        failures.push(`at ${Date.now()}: ${String(error)}`);
        await sleep(50);
      }
      if (into.length % 20 === 0) await sleep(10);
    }
  };
  const loops = [
    ...clients.flatMap((c, k) => [0, 1].map(() => loop(() => c.next(), ids.get(sequences[k]!)!))),
    loop(() => snowflake.next(), flakes),
  ];
  return {
    stop: async () => {
      stopping = true;
      await Promise.all(loops);
      await Promise.all([...clients.map((c) => c.close()), snowflake.close()]);
      return { client: 'node', ids, failures, events };
    },
  };
}

/** `run.py hand-out` on a sequence until SIGTERM: its IDs (one a line) and its failed calls. */
export function pythonHandOut(python: string, urls: readonly string[], sequence: string, idsFile: string): RunningLoad {
  const child = spawn(
    python,
    [
      join(PYTHON_CLIENT_DIR, 'conformance', 'run.py'),
      'hand-out',
      urls.join(','),
      sequence,
      '2',
      '600',
      idsFile,
      '0.01',
    ],
    {
      cwd: PYTHON_CLIENT_DIR,
      env: pythonEnv({ TICKETD_TIMEOUT_S: String(TIMEOUT_MS / 1000) }),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: Record<string, unknown>[] = [];
  let stderr = '';
  createInterface({ input: child.stdout }).on('line', (line) => {
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      stderr += `${line}\n`;
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<number | null>((done) => child.once('close', done));
  return {
    stop: async () => {
      child.kill('SIGTERM');
      const status = await closed;
      const summary = lines.find((l) => l['scenario'] === 'hand-out');
      if (summary === undefined)
        throw new Error(`python hand-out ${sequence} exited ${status} without a summary: ${stderr.slice(-2000)}`);
      const ids = readFileSync(idsFile, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map(BigInt);
      const failures = (summary['firstFailures'] as string[]).concat(
        Number(summary['failed']) > 5 ? [`… ${Number(summary['failed']) - 5} more`] : [],
      );
      return { client: `python ${sequence}`, ids: new Map([[sequence, ids]]), failures, events: [] };
    },
  };
}

/** The Java conformance program's `hand-out` on a sequence until SIGTERM: its IDs (8-byte little-endian) and its error events. */
export function javaHandOut(
  build: JavaBuild,
  urls: readonly string[],
  sequence: string,
  dir: string,
  name: string,
): RunningLoad {
  const jvm: Holder = spawnJava(build, name, ['hand-out', dir, name], {
    env: {
      TICKETD_URLS: urls.join(','),
      TICKETD_SEQUENCE: sequence,
      THREADS: '2',
      IDS_PER_TICK: '10',
      TIMEOUT_MS: String(TIMEOUT_MS),
    },
  });
  return {
    stop: async () => {
      await jvm.stop();
      const bytes = readFileSync(join(dir, `${name}.ids`));
      const view = new BigUint64Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 8));
      const failures = jvm.events
        .filter((e) => e.type === 'error')
        .map((e) => `${String(e.code)}: ${String(e.message)}`);
      return { client: `java ${sequence}`, ids: new Map([[sequence, [...view]]]), failures, events: [] };
    },
  };
}
