/**
 * The Java client (clients/java) in the bench: IDs/s handed out from buffered blocks (one thread and
 * several) and Snowflake IDs/s, measured by a Java bench program (dev.ticketd.client.bench.Bench,
 * JIT warmed up) against a running ticketd. The program checks 4 million IDs taken by its threads
 * at once for repeats and fails on any.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InProcessResult } from './in-process.js';

/** What the Java part of the bench measured, or why it did not run. */
export type JavaClientResults =
  | {
      readonly ran: true;
      readonly results: InProcessResult[];
      readonly uniqueChecked: number;
      readonly repeats: number;
      readonly java: string;
    }
  | { readonly ran: false; readonly reason: string };

const THREADS = 4;

/** Where the opaque figure comes from: a sequence of blocks of 1,000,000 and one of its client tokens (bench/run.ts: opaque_large). */
export interface JavaOpaqueSequence {
  readonly sequence: string;
  readonly token: string;
}

/**
 * Builds the jar, creates the bench's sequences and pools on `ticketdUrl`, runs the Java bench
 * program, and returns its figures. Without `opaque`, it creates an opaque sequence of its own,
 * which a ticketd with TICKETD_CLIENT_TOKENS refuses to lease without a token of it.
 */
export async function runJavaClient(
  ticketdUrl: string,
  adminToken: string,
  opaque?: JavaOpaqueSequence,
): Promise<JavaClientResults> {
  const version = spawnSync('java', ['--version'], { encoding: 'utf8' });
  if (version.status !== 0 || spawnSync('javac', ['--version']).status !== 0)
    return { ran: false, reason: 'no JDK (apt-get install openjdk-17-jdk-headless)' };
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-java-bench-'));
  try {
    const built = spawnSync('sh', ['clients/java/build.sh', '--skip-tests'], {
      env: { ...process.env, TICKETD_JAVA_BUILD_DIR: dir },
      encoding: 'utf8',
    });
    const jar = readdirSync(dir).find((f) => f.endsWith('.jar'));
    if (built.status !== 0 || jar === undefined)
      throw new Error(`clients/java/build.sh failed: ${built.stdout}${built.stderr}`);
    if (!existsSync(join(dir, 'test-classes', 'dev', 'ticketd', 'client', 'bench', 'Bench.class')))
      return {
        ran: false,
        reason: 'the bench program needs JUnit 5 to compile beside the tests (apt-get install junit5)',
      };
    const put = async (path: string, body: object): Promise<void> => {
      const init = {
        method: 'PUT',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      };
      // Once more on a network error: a kept-alive connection may have been closed by ticketd while the build ran.
      const res = await fetch(`${ticketdUrl}${path}`, init).catch(() => fetch(`${ticketdUrl}${path}`, init));
      if (res.status !== 200 && res.status !== 201) throw new Error(`PUT ${path}: ${res.status} ${await res.text()}`);
    };
    await put('/v1/sequences/bench_java_10k', { blockSize: 10_000 });
    await put('/v1/sequences/bench_java_1m', { blockSize: 1_000_000 });
    if (opaque === undefined)
      await put('/v1/sequences/bench_java_opaque', {
        blockSize: 1_000_000,
        ids: 'opaque',
        maxId: '9223372036854775807',
      });
    await put('/v1/worker-pools/bench_java_default', { workerBits: 10 });
    await put('/v1/worker-pools/bench_java_wide', { workerBits: 6 });
    const env = {
      ...process.env,
      TICKETD_URL: ticketdUrl,
      BENCH_SEQUENCE_10K: 'bench_java_10k',
      BENCH_SEQUENCE_1M: 'bench_java_1m',
      BENCH_SEQUENCE_OPAQUE: opaque?.sequence ?? 'bench_java_opaque',
      ...(opaque !== undefined && { BENCH_OPAQUE_TOKEN: opaque.token }),
      BENCH_POOL_DEFAULT: 'bench_java_default',
      BENCH_POOL_WIDE: 'bench_java_wide',
      THREADS: String(THREADS),
    };
    const child = spawn(
      'java',
      ['-cp', `${join(dir, jar)}:${join(dir, 'test-classes')}`, 'dev.ticketd.client.bench.Bench'],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.once('close', done));
    if (code !== 0) throw new Error(`the Java bench program exited with ${code}: ${err}`);
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { name: string; idsPerSecond?: number; checked?: number; repeats?: number });
    const unique = lines.find((l) => l.name === 'unique');
    if (unique === undefined || unique.repeats !== 0)
      throw new Error(`the Java bench found repeated IDs: ${JSON.stringify(unique)}`);
    const results = lines
      .filter((l) => l.idsPerSecond !== undefined)
      .map((l) => ({ name: l.name, idsPerSecond: l.idsPerSecond! }));
    for (const r of results) console.log(`  ${r.name}: ${r.idsPerSecond.toLocaleString('en')} IDs/s`);
    return {
      ran: true,
      results,
      uniqueChecked: unique.checked ?? 0,
      repeats: unique.repeats,
      java: version.stdout.split('\n')[0] ?? '',
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
