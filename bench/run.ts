/**
 * `npm run bench` (entry: bench/main.ts): ticketd against naive Flickr, bare Express and node:http
 * alone, side by side, in one run. Every comparison is a ratio of numbers taken in the same run
 * (these machines are shared and noisy), and every ID every scenario received is checked for
 * uniqueness.
 */
import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { Allocator } from '../src/allocator/allocator.js';
import { loadConfig } from '../src/config/load-config.js';
import { parseSequenceSettings } from '../src/core/sequence.js';
import { startLocalPair } from '../src/launcher/local-pair.js';
import { findServerBinary, freePort } from '../src/launcher/local-mysql.js';
import { silentLogger } from '../src/logger.js';
import { initBackends } from '../src/service/init.js';
import { TicketService } from '../src/service/ticket-service.js';
import { measureClaimCost } from './claim-cost.js';
import { renderHeadlines } from './headlines.js';
import { runInProcess, runSdk } from './in-process.js';
import { createLoad } from './load.js';
import { measureOneId } from './one-id.js';
import { measureInnodbInserts, measurePermutation } from './opaque-cost.js';
import { measureOpaqueWrk, WIDE_SEQUENCE } from './opaque-wrk.js';
import { serveTicketd, startProcess } from './processes.js';
import { renderChart, renderMarkdown } from './report.js';
import { checkedRows, type BenchResults } from './results.js';
import { runSnowflake } from './snowflake.js';
import { runClients } from './clients.js';
import { measureStrict } from './strict.js';
import { measureTls } from './tls.js';

/** How long each load run lasts. */
export interface BenchSettings {
  readonly seconds: number;
  readonly warmupSeconds: number;
}

const CONNECTIONS = 32;

/** Client token of the opaque sequence the SDK leases from (an opaque sequence's blocks and key need one). */
const BENCH_CLIENT_TOKEN = 'bench-client-token-0123456789';
/** The bench creates its worker pools through the admin route. */
const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789';

/** Runs every scenario, writes docs/benchmarks.md, its chart and bench/results/<date>.json, and prints the headlines. */
export async function runBench({ seconds: SECONDS, warmupSeconds: WARMUP_SECONDS }: BenchSettings): Promise<void> {
  const load = createLoad({ seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, connections: CONNECTIONS });
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-bench-'));
  const pair = await startLocalPair(dir);
  const children: ChildProcess[] = [];
  try {
    const backends = loadConfig({ backends: pair.backendsUrl }).backends;
    const allocator = new Allocator({ backends, logger: silentLogger });
    const setup = new TicketService({ allocator, logger: silentLogger });
    await initBackends(allocator, setup);
    await setup.createSequence(parseSequenceSettings('naive', { blockSize: 1 }));
    await setup.createSequence(parseSequenceSettings('small', { blockSize: 50 }));
    await setup.createSequence(parseSequenceSettings('large', { blockSize: 1_000_000 }));
    await setup.createSequence(parseSequenceSettings('claimcost', { blockSize: 1 }));
    await setup.createSequence(parseSequenceSettings('opaque', { blockSize: 10_000, ids: 'opaque' }));
    await setup.createSequence(parseSequenceSettings('opaque_large', { blockSize: 1_000_000, ids: 'opaque' }));
    await setup.createSequence(WIDE_SEQUENCE);
    await setup.close();
    const claimCost = await measureClaimCost(backends[0]!, backends[1]!, pair.b.url, 'claimcost');

    const [naivePort, barePort, rawPort] = [await freePort(), await freePort(), await freePort()];
    const env = {
      TICKETD_BACKENDS: pair.backendsUrl,
      TICKETD_CLIENT_TOKENS: `opaque_large:${BENCH_CLIENT_TOKEN}`,
      TICKETD_ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    };
    const served = await serveTicketd(env);
    children.push(served.child);
    children.push(
      await startProcess(
        ['dist-bench/bench/baseline-servers.js', 'naive', String(naivePort), pair.backendsUrl],
        {},
        /listening/,
      ),
    );
    children.push(
      await startProcess(['dist-bench/bench/baseline-servers.js', 'bare', String(barePort)], {}, /listening/),
    );
    const rawChild = await startProcess(
      ['dist-bench/bench/baseline-servers.js', 'raw', String(rawPort)],
      {},
      /listening/,
    );
    children.push(rawChild);
    const ticketd = served.url;

    console.log(`bench: ${SECONDS} s per run after ${WARMUP_SECONDS} s of warm-up, ${CONNECTIONS} connections`);
    const single = [
      await load({ name: 'ticketd', url: `${ticketd}/v1/sequences/default/next`, idsPerResponse: 1, check: true }),
      await load({
        name: 'naive Flickr',
        url: `http://127.0.0.1:${naivePort}/v1/sequences/naive/next`,
        idsPerResponse: 1,
        check: true,
      }),
      await load({
        name: 'bare Express',
        url: `http://127.0.0.1:${barePort}/v1/sequences/default/next`,
        idsPerResponse: 1,
        check: false,
      }),
    ];
    const batch = [
      await load({
        name: 'ticketd',
        url: `${ticketd}/v1/sequences/default/ids?count=1000`,
        method: 'POST',
        idsPerResponse: 1000,
        check: true,
      }),
      await load({
        name: 'bare Express (counter)',
        url: `http://127.0.0.1:${barePort}/v1/sequences/default/ids`,
        method: 'POST',
        idsPerResponse: 1000,
        check: true,
      }),
      await load({
        name: 'ticketd, blockSize 1,000,000',
        url: `${ticketd}/v1/sequences/large/ids?count=1000`,
        method: 'POST',
        idsPerResponse: 1000,
        check: true,
      }),
    ];
    const workersServed = await serveTicketd(env, 2);
    const workersChild = workersServed.child;
    children.push(workersChild);
    const twoWorkers = workersServed.url;
    const workers = [
      await load({ name: 'one process', url: `${ticketd}/v1/sequences/default/next`, idsPerResponse: 1, check: true }),
      await load({
        name: 'serve --workers 2',
        url: `${twoWorkers}/v1/sequences/default/next`,
        idsPerResponse: 1,
        check: true,
      }),
      await load({
        name: 'one process, count=1000',
        url: `${ticketd}/v1/sequences/default/ids?count=1000`,
        method: 'POST',
        idsPerResponse: 1000,
        check: true,
      }),
      await load({
        name: 'serve --workers 2, count=1000',
        url: `${twoWorkers}/v1/sequences/default/ids?count=1000`,
        method: 'POST',
        idsPerResponse: 1000,
        check: true,
      }),
    ];
    workersChild.kill('SIGTERM');
    const smallBlocks = await load({
      name: 'ticketd, blockSize 50',
      url: `${ticketd}/v1/sequences/small/next`,
      idsPerResponse: 1,
      check: true,
    });
    const inProcess = [
      ...(await runSdk(ticketd, 'default', '10,000')),
      ...(await runSdk(ticketd, 'large', '1,000,000')),
      ...(await runSdk(ticketd, 'opaque_large', '1,000,000', BENCH_CLIENT_TOKEN)),
      ...(await runInProcess()),
    ];
    const snowflake = await runSnowflake(ticketd, BENCH_ADMIN_TOKEN);
    const clients = await runClients(ticketd, BENCH_ADMIN_TOKEN, BENCH_CLIENT_TOKEN);
    // Opaque against ordered, each pair back to back on sequences that differ only in ids.
    const opaqueHttp = [
      await load({
        name: 'ordered (default), count=1000',
        url: `${ticketd}/v1/sequences/default/ids?count=1000`,
        method: 'POST',
        idsPerResponse: 1000,
        check: true,
      }),
      await load({
        name: 'opaque, count=1000',
        url: `${ticketd}/v1/sequences/opaque/ids?count=1000`,
        method: 'POST',
        idsPerResponse: 1000,
        check: true,
      }),
      await load({
        name: 'ordered (default), next',
        url: `${ticketd}/v1/sequences/default/next`,
        idsPerResponse: 1,
        check: true,
      }),
      await load({ name: 'opaque, next', url: `${ticketd}/v1/sequences/opaque/next`, idsPerResponse: 1, check: true }),
      await load({
        name: 'ordered (default), count=100',
        url: `${ticketd}/v1/sequences/default/ids?count=100`,
        method: 'POST',
        idsPerResponse: 100,
        check: true,
      }),
      await load({
        name: 'opaque, count=100',
        url: `${ticketd}/v1/sequences/opaque/ids?count=100`,
        method: 'POST',
        idsPerResponse: 100,
        check: true,
      }),
      await load({
        name: 'ordered (default), count=100 (again)',
        url: `${ticketd}/v1/sequences/default/ids?count=100`,
        method: 'POST',
        idsPerResponse: 100,
        check: true,
      }),
      await load({
        name: 'opaque, count=100 (again)',
        url: `${ticketd}/v1/sequences/opaque/ids?count=100`,
        method: 'POST',
        idsPerResponse: 100,
        check: true,
      }),
    ];
    const opaqueWrk = measureOpaqueWrk(ticketd, served.child.pid!, {
      seconds: SECONDS,
      warmupSeconds: WARMUP_SECONDS,
      connections: CONNECTIONS,
    });
    const perId = measurePermutation();
    const failoverBase = await load({
      name: 'ticketd, backend A killed and restarted',
      url: `${ticketd}/v1/sequences/small/next`,
      idsPerResponse: 1,
      check: true,
      during: async () => {
        await new Promise((r) => setTimeout(r, (SECONDS * 1000) / 4));
        pair.a.signal('SIGKILL');
        await pair.a.exited();
        await new Promise((r) => setTimeout(r, (SECONDS * 1000) / 4));
        await pair.a.restart();
      },
    });
    const tls = await measureTls(load);
    const strict = await measureStrict(load, pair.backendsUrl, BENCH_ADMIN_TOKEN);
    const oneId = await measureOneId(
      load,
      { ticketd, ticketdPid: served.child.pid!, raw: `http://127.0.0.1:${rawPort}`, rawPid: rawChild.pid!, env },
      { seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, connections: CONNECTIONS },
    );
    const inserts = [
      ...(await measureInnodbInserts(pair.a.url, 200_000)),
      ...(await measureInnodbInserts(pair.a.url, 1_000_000)),
    ];
    const server = findServerBinary(process.env.TICKETD_MYSQLD, process.env.PATH);
    const serverVersion = spawnSync(server.path, ['--version'], { encoding: 'utf8' }).stdout.trim();
    const results: BenchResults = {
      date: new Date().toISOString(),
      machine: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${serverVersion}`,
      command: `BENCH_SECONDS=${SECONDS} BENCH_WARMUP_SECONDS=${WARMUP_SECONDS} npm run bench`,
      seconds: SECONDS,
      single,
      batch,
      workers,
      smallBlocks,
      inProcess,
      failover: {
        ...failoverBase,
        note: 'GET next on a blockSize-50 sequence while backend A is killed (kill -9) and restarted',
      },
      claimCost,
      snowflake,
      tls,
      strict,
      oneId,
      clients,
      opaque: { http: opaqueHttp, wrk: opaqueWrk, perId, inserts },
    };
    mkdirSync('bench/results', { recursive: true });
    writeFileSync(`bench/results/${results.date.slice(0, 10)}.json`, JSON.stringify(results, null, 2) + '\n');
    mkdirSync('docs', { recursive: true });
    writeFileSync('docs/benchmarks.md', renderMarkdown(results));
    writeFileSync('docs/benchmarks.svg', renderChart(results));
    console.log(renderHeadlines(results));
    const duplicates = checkedRows(results).filter((r) => r.unique === false);
    if (duplicates.length > 0) throw new Error(`duplicate IDs in: ${duplicates.map((d) => d.name).join(', ')}`);
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await pair.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
