/**
 * Scenario 8 over HTTP, server-bound and measured with wrk: batches of 1,000 opaque IDs against the
 * same batch of ordered IDs (small numbers) and of ordered IDs as wide as opaque ones (20 decimal
 * digits, so the cost of formatting wide numbers shows apart from the permutation's). Rounds
 * alternate the three routes, so drift on a shared machine hits each alike.
 *
 * Alone: `npm run build && tsc -p tsconfig.bench.json && node dist-bench/bench/opaque-wrk.js` (BENCH_ROUNDS,
 * default 5; BENCH_SECONDS, default 10; BENCH_WARMUP_SECONDS, default 3).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Allocator } from '../src/allocator/allocator.js';
import { loadConfig } from '../src/config/load-config.js';
import { parseSequenceSettings } from '../src/core/sequence.js';
import { startLocalPair } from '../src/launcher/local-pair.js';
import { silentLogger } from '../src/logger.js';
import { initBackends } from '../src/service/init.js';
import { TicketService } from '../src/service/ticket-service.js';
import { serveTicketd } from './processes.js';
import { ensureWrk, wrkLoad, type WrkResult } from './wrk-load.js';

/** Ordered IDs as wide as most opaque ones of a 64-bit domain: 20 decimal digits. */
export const WIDE_SEQUENCE = parseSequenceSettings('wide', {
  blockSize: 10_000,
  startAfter: '10000000000000000000',
  maxId: '18446744073709551615',
});
/** The sequences this scenario needs, besides `default`. */
const WRK_SEQUENCES = [WIDE_SEQUENCE, parseSequenceSettings('opaque', { blockSize: 10_000, ids: 'opaque' })];

/** Rounds of (ordered, opaque, ordered wide), unless the caller says. */
const ROUNDS = 2;

/** The wrk rows of scenario 8, `rounds` rounds of the three routes in turn. */
export function measureOpaqueWrk(
  ticketd: string,
  serverPid: number,
  options: { seconds: number; warmupSeconds: number; connections: number; rounds?: number },
): WrkResult[] {
  const wrk = ensureWrk();
  const scriptDir = mkdtempSync(join(tmpdir(), 'ticketd-wrk-'));
  const routes = [
    ['ordered (default), count=1000', 'default'],
    ['opaque, count=1000', 'opaque'],
    ['ordered, 20 digits, count=1000', 'wide'],
  ] as const;
  try {
    const results: WrkResult[] = [];
    for (let round = 0; round < (options.rounds ?? ROUNDS); round++) {
      for (const [name, sequence] of routes) {
        const url = `${ticketd}/v1/sequences/${sequence}/ids?count=1000`;
        results.push(
          wrkLoad(wrk, { name, url, method: 'POST', idsPerResponse: 1000, serverPid, scriptDir, ...options }),
        );
      }
    }
    return results;
  } finally {
    rmSync(scriptDir, { recursive: true, force: true });
  }
}

/**
 * Opaque ÷ ordered IDs/s of each round (rows in measureOpaqueWrk's order), and their median: on
 * shared cores one round's neighbours can halve a rate, and the median of the same-round ratios
 * is the figure such drift moves least.
 */
export function roundRatios(results: readonly WrkResult[]): { ratios: number[]; median: number } {
  const ratios: number[] = [];
  for (let i = 0; i + 1 < results.length; i += 3) ratios.push(results[i + 1]!.idsPerSecond / results[i]!.idsPerSecond);
  const sorted = [...ratios].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { ratios, median };
}

/** Mean of a field over the rows of one route. */
export function meanOf(results: readonly WrkResult[], name: string, field: 'idsPerSecond' | 'cpuMsPer1000Ids'): number {
  const rows = results.filter((r) => r.name === name);
  return rows.reduce((sum, r) => sum + r[field], 0) / Math.max(1, rows.length);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-bench-'));
  const pair = await startLocalPair(dir);
  let child: ChildProcess | undefined;
  try {
    const allocator = new Allocator({
      backends: loadConfig({ backends: pair.backendsUrl }).backends,
      logger: silentLogger,
    });
    const setup = new TicketService({ allocator, logger: silentLogger });
    await initBackends(allocator, setup);
    for (const settings of WRK_SEQUENCES) await setup.createSequence(settings);
    await setup.close();
    const served = await serveTicketd({ TICKETD_BACKENDS: pair.backendsUrl });
    child = served.child;
    const results = measureOpaqueWrk(served.url, child.pid!, {
      seconds: Number(process.env.BENCH_SECONDS ?? 10),
      warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 3),
      connections: 32,
      rounds: Number(process.env.BENCH_ROUNDS ?? 5),
    });
    for (const r of results)
      console.log(
        `${r.name.padEnd(32)} ${Math.round(r.idsPerSecond).toLocaleString('en').padStart(11)} IDs/s  ${r.cpuMsPer1000Ids.toFixed(3)} ms CPU/1000 IDs  server ${r.serverCpuShare} cores  p99 ${r.p99} ms`,
      );
    const { ratios, median } = roundRatios(results);
    console.log(
      `opaque / ordered per round: ${ratios.map((x) => x.toFixed(2)).join(', ')}; median ${median.toFixed(2)}×; server CPU per 1,000 IDs (mean) ordered ${meanOf(results, 'ordered (default), count=1000', 'cpuMsPer1000Ids').toFixed(3)} ms, opaque ${meanOf(results, 'opaque, count=1000', 'cpuMsPer1000Ids').toFixed(3)} ms, ordered 20 digits ${meanOf(results, 'ordered, 20 digits, count=1000', 'cpuMsPer1000Ids').toFixed(3)} ms`,
    );
    const ordered = meanOf(results, 'ordered (default), count=1000', 'idsPerSecond');
    console.log(
      `opaque / ordered = ${(meanOf(results, 'opaque, count=1000', 'idsPerSecond') / ordered).toFixed(2)}×, ordered 20 digits / ordered = ${(meanOf(results, 'ordered, 20 digits, count=1000', 'idsPerSecond') / ordered).toFixed(2)}×`,
    );
  } finally {
    child?.kill('SIGKILL');
    await pair.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('opaque-wrk.js')) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(`bench: ${error instanceof Error ? error.stack : String(error)}`);
      process.exit(1);
    },
  );
}
