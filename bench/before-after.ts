/**
 * One run, two builds: the issuing path of this build ("after") against another build's ("before",
 * BENCH_BEFORE = the root of a checkout with its dist/ built), on the same backends, with wrk, in
 * rounds that alternate them so that a shared machine's drift hits both alike. Rows: one ID per
 * request (`GET …/next`, `POST …/ids?count=1`) beside node:http alone (baseline-servers.ts `raw`),
 * and a batch of 1,000 IDs of an opaque sequence beside the same batch of ordered ones.
 *
 * `npm run build && tsc -p tsconfig.bench.json && BENCH_BEFORE=/path/to/old node dist-bench/bench/before-after.js`
 * BENCH_SECONDS (default 5), BENCH_WARMUP_SECONDS (default 2), BENCH_ROUNDS (default 3).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Allocator } from '../src/allocator/allocator.js';
import { loadConfig } from '../src/config/load-config.js';
import { parseSequenceSettings } from '../src/core/sequence.js';
import { freePort } from '../src/launcher/local-mysql.js';
import { startLocalPair } from '../src/launcher/local-pair.js';
import { silentLogger } from '../src/logger.js';
import { initBackends } from '../src/service/init.js';
import { TicketService } from '../src/service/ticket-service.js';
import { startProcess } from './processes.js';
import { ensureWrk, wrkLoad, type WrkResult } from './wrk-load.js';

/** A server under test: its URL and pid. */
interface Target {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
}

async function serve(
  name: string,
  script: string,
  env: Record<string, string>,
): Promise<Target & { child: ChildProcess }> {
  const port = await freePort();
  const child = await startProcess([script, 'serve'], { ...env, TICKETD_PORT: String(port) }, /ticketd listening/);
  return { name, url: `http://127.0.0.1:${port}`, pid: child.pid!, child };
}

/** Mean of the rows' rates whose name is `name`. */
function mean(rows: readonly WrkResult[], name: string): number {
  const of = rows.filter((r) => r.name === name);
  return of.reduce((s, r) => s + r.idsPerSecond, 0) / Math.max(1, of.length);
}

/** Each round's rate of `name` ÷ the same round's rate of `base`, and their median: `0.91 0.88 0.93 (0.91)`. */
function perRound(rows: readonly WrkResult[], name: string, base: string): string {
  const of = rows.filter((r) => r.name === name);
  const under = rows.filter((r) => r.name === base);
  const ratios = of.map((r, k) => r.idsPerSecond / under[k]!.idsPerSecond);
  const sorted = [...ratios].sort((a, b) => a - b);
  const median =
    sorted.length % 2 === 1
      ? sorted[(sorted.length - 1) / 2]!
      : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
  return `${ratios.map((r) => r.toFixed(2)).join(' ')} (${median.toFixed(2)})`;
}

async function main(): Promise<void> {
  const before = process.env.BENCH_BEFORE;
  if (before === undefined)
    throw new Error('BENCH_BEFORE is unset: the root of the checkout to compare with (its dist/ built)');
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const wrk = ensureWrk();
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-bench-'));
  const scriptDir = mkdtempSync(join(tmpdir(), 'ticketd-wrk-'));
  const pair = await startLocalPair(dir);
  const children: ChildProcess[] = [];
  try {
    const allocator = new Allocator({
      backends: loadConfig({ backends: pair.backendsUrl }).backends,
      logger: silentLogger,
    });
    const setup = new TicketService({ allocator, logger: silentLogger });
    await initBackends(allocator, setup);
    await setup.createSequence(parseSequenceSettings('opaque', { blockSize: 10_000, ids: 'opaque' }));
    await setup.close();
    const env = { TICKETD_BACKENDS: pair.backendsUrl };
    const rawPort = await freePort();
    const raw = await startProcess(['dist-bench/bench/baseline-servers.js', 'raw', String(rawPort)], {}, /listening/);
    children.push(raw);
    const after = await serve('after', 'dist/cli/main.js', env);
    const old = await serve('before', join(before, 'dist/cli/main.js'), env);
    children.push(after.child, old.child);
    const targets: Target[] = [{ name: 'node:http', url: `http://127.0.0.1:${rawPort}`, pid: raw.pid! }, after, old];
    const rows: WrkResult[] = [];
    const run = (name: string, target: Target, path: string, method: 'GET' | 'POST', ids: number): void => {
      const row = wrkLoad(wrk, {
        name: `${target.name} ${name}`,
        url: `${target.url}${path}`,
        method,
        idsPerResponse: ids,
        serverPid: target.pid,
        scriptDir,
        seconds,
        warmupSeconds,
        connections: 32,
      });
      rows.push(row);
      console.log(
        `${row.name.padEnd(36)} ${Math.round(row.idsPerSecond).toLocaleString('en').padStart(11)} IDs/s  ${row.cpuMsPer1000Ids.toFixed(3)} ms CPU/1000 IDs  p50 ${row.p50} / p99 ${row.p99} ms  non-2xx ${row.non2xx}  load ${loadavg()[0]!.toFixed(1)}`,
      );
    };
    for (let round = 0; round < rounds; round++) {
      for (const target of targets) run('next', target, '/v1/sequences/default/next', 'GET', 1);
      for (const target of targets) run('ids?count=1', target, '/v1/sequences/default/ids?count=1', 'POST', 1);
      for (const target of [after, old]) {
        run('ordered count=1000', target, '/v1/sequences/default/ids?count=1000', 'POST', 1000);
        run('opaque count=1000', target, '/v1/sequences/opaque/ids?count=1000', 'POST', 1000);
      }
    }
    for (const build of ['after', 'before']) {
      const next = perRound(rows, `${build} next`, 'node:http next');
      const one = perRound(rows, `${build} ids?count=1`, 'node:http ids?count=1');
      const opaque = perRound(rows, `${build} opaque count=1000`, `${build} ordered count=1000`);
      console.log(
        `${build}: next ${(mean(rows, `${build} next`) / mean(rows, 'node:http next')).toFixed(2)}× node:http, ids?count=1 ${(mean(rows, `${build} ids?count=1`) / mean(rows, 'node:http ids?count=1')).toFixed(2)}× node:http, opaque/ordered count=1000 ${(mean(rows, `${build} opaque count=1000`) / mean(rows, `${build} ordered count=1000`)).toFixed(2)}× (means of the rates)`,
      );
      console.log(
        `${build}, per round (median): next ÷ node:http ${next} · ids?count=1 ÷ node:http ${one} · opaque ÷ ordered ${opaque}`,
      );
    }
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await pair.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(scriptDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench: ${error instanceof Error ? error.stack : String(error)}`);
    process.exit(1);
  },
);
