/**
 * Giving IDs back (docs/benchmarks.md, "Giving IDs back"): IDs lost per clean restart of a front end
 * with reuse off (an ordered sequence) and on (the same, created with reuse), and single-ID and
 * 1,000-ID request speed with reuse off and on, in the same run, on a local pair of this run's own.
 * Every ID served is checked for uniqueness; times are not asserted.
 *
 *   npm run build && npx tsc -p tsconfig.bench.json && node dist-bench/bench/restart-loss.js
 *
 * BENCH_RESTARTS (default 5) and BENCH_SECONDS (default 3 per speed row) set its size.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql, { type RowDataPacket } from 'mysql2/promise';
import { Allocator } from '../src/allocator/allocator.js';
import { loadConfig } from '../src/config/load-config.js';
import { startLocalPair, type LocalPair } from '../src/launcher/local-pair.js';
import { silentLogger } from '../src/logger.js';
import { startTicketd, type RunningTicketd } from '../src/server.js';
import { initBackends } from '../src/service/init.js';
import { TicketService } from '../src/service/ticket-service.js';

const TOKEN = 'bench-admin-token-0123456789';
const BLOCK_SIZE = 1000;
const RESTARTS = Number(process.env.BENCH_RESTARTS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = 8;

/** Every ID served in the run, by sequence: a repeat fails it. */
const seen = new Set<string>();
function record(sequence: string, ids: readonly string[]): void {
  for (const id of ids) {
    const key = `${sequence}/${id}`;
    if (seen.has(key)) throw new Error(`ID ${id} of ${sequence} was served twice`);
    seen.add(key);
  }
}

async function start(backends: string): Promise<RunningTicketd> {
  const config = loadConfig({ backends, port: '0', adminToken: TOKEN });
  return startTicketd({ config, logger: silentLogger, host: '127.0.0.1' });
}

async function ids(url: string, sequence: string, count: number): Promise<string[]> {
  const res = await fetch(`${url}/v1/sequences/${sequence}/ids?count=${count}`, { method: 'POST' });
  if (res.status !== 200) throw new Error(`POST ids answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { ids: string[] }).ids;
}

async function givenBack(pair: LocalPair, sequence: string): Promise<number> {
  let total = 0;
  for (const url of [pair.a.url, pair.b.url]) {
    const conn = await mysql.createConnection(url);
    try {
      const [rows] = await conn.query<RowDataPacket[]>(
        'SELECT COALESCE(SUM(last_id - first_id + 1), 0) AS n FROM ticketd_returned_ranges WHERE sequence = ?',
        [sequence],
      );
      total += Number(rows[0]!.n);
    } finally {
      await conn.end();
    }
  }
  return total;
}

/** Restarts a front end RESTARTS times under a little load; returns IDs cached at each stop, and those not given back. */
async function restartLoss(pair: LocalPair, sequence: string): Promise<{ cached: number; lost: number }> {
  let cached = 0;
  let lost = 0;
  for (let round = 0; round < RESTARTS; round++) {
    const server = await start(pair.backendsUrl);
    for (let i = 0; i < 50; i++) record(sequence, await ids(server.url, sequence, 100));
    // A prefetch in flight lands first: the cache holds what it will hold at the stop.
    await new Promise((done) => setTimeout(done, 300));
    const held = server.service.cacheStatus(sequence)?.available ?? 0;
    const before = await givenBack(pair, sequence);
    await server.close();
    const back = (await givenBack(pair, sequence)) - before;
    cached += held;
    lost += held - back;
  }
  return { cached: cached / RESTARTS, lost: lost / RESTARTS };
}

/** Requests per second and IDs per second of `count`-ID requests over CONNECTIONS loops for SECONDS. */
async function speed(url: string, sequence: string, count: number): Promise<{ rps: number; idsPerS: number }> {
  const until = performance.now() + SECONDS * 1000;
  let requests = 0;
  const loop = async (): Promise<void> => {
    while (performance.now() < until) {
      record(sequence, await ids(url, sequence, count));
      requests++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, loop));
  const s = (performance.now() - started) / 1000;
  return { rps: Math.round(requests / s), idsPerS: Math.round((requests * count) / s) };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-bench-restart-'));
  const pair = await startLocalPair(dir);
  try {
    const allocator = new Allocator({
      backends: loadConfig({ backends: pair.backendsUrl }).backends,
      logger: silentLogger,
    });
    const service = new TicketService({ allocator, logger: silentLogger });
    await initBackends(allocator, service).finally(() => service.close());
    const admin = await start(pair.backendsUrl);
    for (const [name, reuse] of [
      ['plain', false],
      ['reusing', true],
    ] as const) {
      const res = await fetch(`${admin.url}/v1/sequences/${name}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ blockSize: BLOCK_SIZE, ...(reuse && { reuse: true }) }),
      });
      if (res.status !== 201) throw new Error(`PUT ${name} answered ${res.status}`);
    }
    await admin.close();
    const off = await restartLoss(pair, 'plain');
    const on = await restartLoss(pair, 'reusing');
    console.log(`IDs lost per clean restart (block ${BLOCK_SIZE}, ${RESTARTS} restarts after 5,000 IDs each):`);
    console.log(`  reuse off: ${off.lost} of ${off.cached} cached; reuse on: ${on.lost} of ${on.cached} cached`);
    const server = await start(pair.backendsUrl);
    try {
      for (const count of [1, 1000]) {
        // Balanced order (ABBAAB): neither side always runs first, after a warm-up, or beside the same neighbours.
        const totals = { plain: 0, reusing: 0 };
        for (const sequence of ['plain', 'reusing', 'reusing', 'plain', 'plain', 'reusing'] as const) {
          const r = await speed(server.url, sequence, count);
          totals[sequence] += r.idsPerS / 3;
          console.log(`  count=${count} ${sequence === 'plain' ? 'reuse off' : 'reuse on '}: ${r.rps} requests/s`);
        }
        console.log(
          `  count=${count}: mean ${Math.round(totals.plain)} IDs/s reuse off, ${Math.round(totals.reusing)} reuse on`,
        );
      }
    } finally {
      await server.close();
    }
    console.log(`${seen.size} IDs served, every one once`);
  } finally {
    await pair.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench: ${error instanceof Error ? error.stack : String(error)}`);
    process.exit(1);
  },
);
