/**
 * `npm run bench`: ticketd against naive Flickr and bare Express, side by side, in one run.
 * Every comparison is a ratio of numbers taken in the same run (these machines are shared and
 * noisy), and every ID every scenario received is checked for uniqueness.
 * BENCH_SECONDS (default 10) and BENCH_WARMUP_SECONDS (default 3) set the durations.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Allocator } from '../src/allocator/allocator.js';
import { loadConfig } from '../src/config.js';
import { parseSequenceSettings } from '../src/core/sequence.js';
import { startLocalPair } from '../src/launcher/local-pair.js';
import { findServerBinary, freePort } from '../src/launcher/local-mysql.js';
import { silentLogger } from '../src/logger.js';
import { initBackends } from '../src/service/init.js';
import { TicketService } from '../src/service/ticket-service.js';
import { measureClaimCost, type StepCost } from './claim-cost.js';
import { measureInnodbInserts, measurePermutation, type CostResult } from './opaque-cost.js';
import { meanOf, measureOpaqueWrk, WIDE_SEQUENCE } from './opaque-wrk.js';
import type { WrkResult } from './wrk-load.js';
import { runInProcess, runSdk, type InProcessResult } from './in-process.js';
import { runSnowflake, type SnowflakeResults } from './snowflake.js';
import { renderChart, renderMarkdown } from './report.js';
import { measureStrict, type StrictResults } from './strict.js';
import { measureTls, type TlsResults } from './tls.js';
import { assertUnique } from './unique.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const CONNECTIONS = 32;

/** What one load run measured. */
export interface HttpResult {
  readonly name: string;
  readonly requestsPerSecond: number;
  readonly idsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly maxMs: number;
  readonly failed: number;
  readonly ids: number;
  readonly unique: boolean | 'not checked';
}

/** Everything a run produced. */
export interface BenchResults {
  readonly date: string;
  readonly machine: string;
  readonly command: string;
  readonly seconds: number;
  readonly single: HttpResult[];
  readonly batch: HttpResult[];
  readonly workers: HttpResult[];
  readonly smallBlocks: HttpResult;
  readonly inProcess: InProcessResult[];
  readonly failover: HttpResult & { readonly note: string };
  readonly claimCost: StepCost[];
  readonly snowflake: SnowflakeResults;
  /** Scenario 9: TLS to the backends against plaintext, and HTTPS for clients against HTTP. */
  readonly tls: TlsResults;
  /** Scenario 10: strict sequences beside ordered, through the leader and a follower, and the failover stall. */
  readonly strict: StrictResults;
  readonly opaque: {
    readonly http: HttpResult[];
    /** Batches of 1,000 measured with wrk, server-bound: ordered, opaque, ordered of 20 digits, in rounds. */
    readonly wrk: WrkResult[];
    readonly perId: CostResult[];
    readonly inserts: CostResult[];
  };
}

/** Client token of the opaque sequence the SDK leases from (an opaque sequence's blocks and key need one). */
const BENCH_CLIENT_TOKEN = 'bench-client-token-0123456789';
/** The bench creates its worker pools through the admin route. */
const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789';

interface LoadOptions {
  readonly name: string;
  readonly url: string;
  readonly method?: 'GET' | 'POST';
  readonly idsPerResponse: number;
  readonly check: boolean;
  readonly seconds?: number;
  readonly during?: () => Promise<void>;
}

async function load(options: LoadOptions): Promise<HttpResult> {
  const base = { url: options.url, connections: CONNECTIONS, method: options.method ?? 'GET' };
  await autocannon({ ...base, duration: WARMUP_SECONDS });
  const bodies: Buffer[] = [];
  const run = autocannon({
    ...base,
    duration: options.seconds ?? SECONDS,
    ...(options.check && { setupClient: (client) => client.on('body', (body: Buffer) => bodies.push(body)) }),
  });
  await options.during?.();
  const result = await run;
  const unique = options.check ? assertUnique(bodies, options.name) : 'not checked';
  const failed = result.non2xx + result.errors + result.timeouts;
  return {
    name: options.name,
    requestsPerSecond: result.requests.average,
    idsPerSecond: result.requests.average * options.idsPerResponse,
    p50: result.latency.p50,
    p99: result.latency.p99,
    p999: result.latency.p99_9,
    maxMs: result.latency.max,
    failed,
    ids: bodies.length * options.idsPerResponse,
    unique,
  };
}

function startProcess(args: string[], env: Record<string, string>, ready: RegExp): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (ready.test(seen)) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

async function main(): Promise<void> {
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

    const [ticketdPort, naivePort, barePort] = [await freePort(), await freePort(), await freePort()];
    const env = { TICKETD_BACKENDS: pair.backendsUrl, TICKETD_PORT: String(ticketdPort), TICKETD_CLIENT_TOKENS: `opaque_large:${BENCH_CLIENT_TOKEN}`, TICKETD_ADMIN_TOKEN: BENCH_ADMIN_TOKEN };
    children.push(await startProcess(['dist/cli/main.js', 'serve'], env, /ticketd listening/));
    children.push(await startProcess(['dist-bench/bench/baseline-servers.js', 'naive', String(naivePort), pair.backendsUrl], {}, /listening/));
    children.push(await startProcess(['dist-bench/bench/baseline-servers.js', 'bare', String(barePort)], {}, /listening/));
    const ticketd = `http://127.0.0.1:${ticketdPort}`;

    console.log(`bench: ${SECONDS} s per run after ${WARMUP_SECONDS} s of warm-up, ${CONNECTIONS} connections`);
    const single = [
      await load({ name: 'ticketd', url: `${ticketd}/v1/sequences/default/next`, idsPerResponse: 1, check: true }),
      await load({ name: 'naive Flickr', url: `http://127.0.0.1:${naivePort}/v1/sequences/naive/next`, idsPerResponse: 1, check: true }),
      await load({ name: 'bare Express', url: `http://127.0.0.1:${barePort}/v1/sequences/default/next`, idsPerResponse: 1, check: false }),
    ];
    const batch = [
      await load({ name: 'ticketd', url: `${ticketd}/v1/sequences/default/ids?count=1000`, method: 'POST', idsPerResponse: 1000, check: true }),
      await load({ name: 'bare Express (counter)', url: `http://127.0.0.1:${barePort}/v1/sequences/default/ids`, method: 'POST', idsPerResponse: 1000, check: true }),
      await load({ name: 'ticketd, blockSize 1,000,000', url: `${ticketd}/v1/sequences/large/ids?count=1000`, method: 'POST', idsPerResponse: 1000, check: true }),
    ];
    const workersPort = await freePort();
    const workersChild = await startProcess(['dist/cli/main.js', 'serve', '--workers', '2'], { ...env, TICKETD_PORT: String(workersPort) }, /ticketd listening[\s\S]*ticketd listening/);
    children.push(workersChild);
    const twoWorkers = `http://127.0.0.1:${workersPort}`;
    const workers = [
      await load({ name: 'one process', url: `${ticketd}/v1/sequences/default/next`, idsPerResponse: 1, check: true }),
      await load({ name: 'serve --workers 2', url: `${twoWorkers}/v1/sequences/default/next`, idsPerResponse: 1, check: true }),
      await load({ name: 'one process, count=1000', url: `${ticketd}/v1/sequences/default/ids?count=1000`, method: 'POST', idsPerResponse: 1000, check: true }),
      await load({ name: 'serve --workers 2, count=1000', url: `${twoWorkers}/v1/sequences/default/ids?count=1000`, method: 'POST', idsPerResponse: 1000, check: true }),
    ];
    workersChild.kill('SIGTERM');
    const smallBlocks = await load({ name: 'ticketd, blockSize 50', url: `${ticketd}/v1/sequences/small/next`, idsPerResponse: 1, check: true });
    const inProcess = [
      ...(await runSdk(ticketd, 'default', '10,000')),
      ...(await runSdk(ticketd, 'large', '1,000,000')),
      ...(await runSdk(ticketd, 'opaque_large', '1,000,000', BENCH_CLIENT_TOKEN)),
      ...(await runInProcess()),
    ];
    const snowflake = await runSnowflake(ticketd, BENCH_ADMIN_TOKEN);
    // Opaque against ordered, each pair back to back on sequences that differ only in ids.
    const opaqueHttp = [
      await load({ name: 'ordered (default), count=1000', url: `${ticketd}/v1/sequences/default/ids?count=1000`, method: 'POST', idsPerResponse: 1000, check: true }),
      await load({ name: 'opaque, count=1000', url: `${ticketd}/v1/sequences/opaque/ids?count=1000`, method: 'POST', idsPerResponse: 1000, check: true }),
      await load({ name: 'ordered (default), next', url: `${ticketd}/v1/sequences/default/next`, idsPerResponse: 1, check: true }),
      await load({ name: 'opaque, next', url: `${ticketd}/v1/sequences/opaque/next`, idsPerResponse: 1, check: true }),
      await load({ name: 'ordered (default), count=100', url: `${ticketd}/v1/sequences/default/ids?count=100`, method: 'POST', idsPerResponse: 100, check: true }),
      await load({ name: 'opaque, count=100', url: `${ticketd}/v1/sequences/opaque/ids?count=100`, method: 'POST', idsPerResponse: 100, check: true }),
      await load({ name: 'ordered (default), count=100 (again)', url: `${ticketd}/v1/sequences/default/ids?count=100`, method: 'POST', idsPerResponse: 100, check: true }),
      await load({ name: 'opaque, count=100 (again)', url: `${ticketd}/v1/sequences/opaque/ids?count=100`, method: 'POST', idsPerResponse: 100, check: true }),
    ];
    const opaqueWrk = measureOpaqueWrk(ticketd, children[0]!.pid!, { seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, connections: CONNECTIONS });
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
    const inserts = [...(await measureInnodbInserts(pair.a.url, 200_000)), ...(await measureInnodbInserts(pair.a.url, 1_000_000))];
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
      failover: { ...failoverBase, note: 'GET next on a blockSize-50 sequence while backend A is killed (kill -9) and restarted' },
      claimCost,
      snowflake,
      tls,
      strict,
      opaque: { http: opaqueHttp, wrk: opaqueWrk, perId, inserts },
    };
    mkdirSync('bench/results', { recursive: true });
    writeFileSync(`bench/results/${results.date.slice(0, 10)}.json`, JSON.stringify(results, null, 2) + '\n');
    mkdirSync('docs', { recursive: true });
    writeFileSync('docs/benchmarks.md', renderMarkdown(results));
    writeFileSync('docs/benchmarks.svg', renderChart(results));
    printHeadlines(results);
    const duplicates = [...single, ...batch, ...workers, smallBlocks, failoverBase, ...opaqueHttp, ...tls.backends, ...tls.clients, ...strictRows(strict)].filter((r) => r.unique === false);
    if (duplicates.length > 0) throw new Error(`duplicate IDs in: ${duplicates.map((d) => d.name).join(', ')}`);
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await pair.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every row of scenario 10, strict and ordered. */
function strictRows(s: StrictResults): HttpResult[] {
  return s.pairs.flatMap((p) => [p.ordered, p.strict]);
}

/** Mean of strict / ordered IDs/s over the rounds of one comparison of scenario 10. */
function strictRatio(s: StrictResults, what: string): number {
  const pairs = s.pairs.filter((p) => p.what === what);
  return pairs.reduce((sum, p) => sum + p.strict.idsPerSecond / Math.max(1, p.ordered.idsPerSecond), 0) / Math.max(1, pairs.length);
}

/** IDs/s of the Snowflake row whose name starts with `prefix`. */
function sfAt(r: BenchResults, prefix: string): number {
  return r.snowflake.generators.find((x) => x.name.startsWith(prefix))?.idsPerSecond ?? 0;
}

function printHeadlines(r: BenchResults): void {
  const [t, naive, bare] = r.single as [HttpResult, HttpResult, HttpResult];
  const [tb, bb] = r.batch as [HttpResult, HttpResult];
  const snowflake = r.inProcess.find((x) => x.name.startsWith('@sapphire/snowflake'));
  const sdk = r.inProcess.find((x) => x.name === 'SDK next() (leases blocks of 1,000,000)');
  const sdkSync = r.inProcess.find((x) => x.name === 'SDK nextSync() (leases blocks of 1,000,000)');
  const ceiling = r.inProcess.find((x) => x.name.startsWith('await of an async function'));
  const opaqueSync = r.inProcess.find((x) => x.name === 'SDK nextSync() (opaque IDs, leases blocks of 1,000,000)');
  const [ob, oo, os, oos, ob100, oo100, ob100b, oo100b] = r.opaque.http as [HttpResult, HttpResult, HttpResult, HttpResult, HttpResult, HttpResult, HttpResult, HttpResult];
  const tlsMean = (side: string, what: string, field: 'requestsPerSecond' | 'handshakesPer10kRequests'): number => {
    const rows = r.tls.backends.filter((x) => x.name.startsWith(side) && x.name.includes(what));
    return rows.reduce((sum, x) => sum + (x[field] ?? 0), 0) / Math.max(1, rows.length);
  };
  const clientMean = (side: string): number => {
    const rows = r.tls.clients.filter((x) => x.name.startsWith(side));
    return rows.reduce((sum, x) => sum + x.requestsPerSecond, 0) / Math.max(1, rows.length);
  };
  const rows = (name: string): number => r.opaque.inserts.find((x) => x.name.startsWith(`InnoDB insert rate, ${name}`))?.value ?? 0;
  const ratio = (a: number, b: number): string => (b === 0 ? 'n/a' : `${(a / b).toFixed(2)}×`);
  console.log(`
headline ratios (same run):
  single ID: ticketd / bare Express = ${ratio(t.requestsPerSecond, bare.requestsPerSecond)} (target ≥ 0.9×), ticketd / naive Flickr = ${ratio(t.requestsPerSecond, naive.requestsPerSecond)} (target ≥ 5×)
  batch of 1,000: ticketd / bare Express counter = ${ratio(tb.idsPerSecond, bb.idsPerSecond)} (target ≥ 0.8×), ticketd = ${Math.round(tb.idsPerSecond).toLocaleString('en')} IDs/s (target ≥ 1,000,000)
  refills (blockSize 50): p99 ${r.smallBlocks.p99} ms vs ${t.p99} ms with blockSize 10,000
  in-process (blocks of 1,000,000): SDK next() / @sapphire/snowflake = ${ratio(sdk?.idsPerSecond ?? 0, snowflake?.idsPerSecond ?? 0)} (ceiling for any awaited call: ${ratio(ceiling?.idsPerSecond ?? 0, snowflake?.idsPerSecond ?? 0)}), nextSync() / snowflake = ${ratio(sdkSync?.idsPerSecond ?? 0, snowflake?.idsPerSecond ?? 0)} (target ≥ 1.5×)
  workers: 2 / 1 = ${ratio(r.workers[1]!.requestsPerSecond, r.workers[0]!.requestsPerSecond)} single, ${ratio(r.workers[3]!.idsPerSecond, r.workers[2]!.idsPerSecond)} batch
  opaque IDs (wrk): batch of 1,000 opaque / ordered = ${ratio(meanOf(r.opaque.wrk, 'opaque, count=1000', 'idsPerSecond'), meanOf(r.opaque.wrk, 'ordered (default), count=1000', 'idsPerSecond'))} (target ≥ 0.8×), server CPU per 1,000 IDs ${meanOf(r.opaque.wrk, 'opaque, count=1000', 'cpuMsPer1000Ids').toFixed(3)} ms vs ${meanOf(r.opaque.wrk, 'ordered (default), count=1000', 'cpuMsPer1000Ids').toFixed(3)} ms ordered
  opaque IDs (autocannon): batch of 100 opaque / ordered = ${ratio(oo100.idsPerSecond + oo100b.idsPerSecond, ob100.idsPerSecond + ob100b.idsPerSecond)} (target ≥ 0.9×)
  TLS to the backends / plaintext: next ${ratio(tlsMean('TLS', 'blocks cached', 'requestsPerSecond'), tlsMean('plaintext', 'blocks cached', 'requestsPerSecond'))} (target ≥ 0.95×), a ticket per request ${ratio(tlsMean('TLS', 'a ticket per request', 'requestsPerSecond'), tlsMean('plaintext', 'a ticket per request', 'requestsPerSecond'))}; handshakes per 10,000 requests ${tlsMean('TLS', 'blocks cached', 'handshakesPer10kRequests')} (cached) and ${tlsMean('TLS', 'a ticket per request', 'handshakesPer10kRequests')} (a ticket each)
  strict / ordered (mean of rounds): next through the leader ${strictRatio(r.strict, 'next, through the leader').toFixed(2)}× (target ≥ 0.8×), through a follower ${strictRatio(r.strict, 'next, through a follower').toFixed(2)}× (target ≥ 0.4×), count=100 ${strictRatio(r.strict, 'count=100, through the leader').toFixed(2)}× (target ≥ 0.5×); failover stall after kill -9 of the leader ${r.strict.failoverStallMs.join(' ms, ')} ms (target ≤ 3,000), ${r.strict.failoverRefused} refused
  HTTPS front end / HTTP: next ${ratio(clientMean('HTTPS'), clientMean('HTTP front end'))} (${Math.round(clientMean('HTTPS'))} vs ${Math.round(clientMean('HTTP front end'))} req/s)
  opaque IDs (autocannon): batch of 1,000 opaque / ordered = ${ratio(oo.idsPerSecond, ob.idsPerSecond)}, next ${ratio(oos.requestsPerSecond, os.requestsPerSecond)}, SDK nextSync() opaque / snowflake = ${ratio(opaqueSync?.idsPerSecond ?? 0, snowflake?.idsPerSecond ?? 0)} (target ≥ 1.0×)
  InnoDB inserts, opaque / ordered keys: ${ratio(rows('200,000 rows, opaque'), rows('200,000 rows, ordered'))} at 200,000 rows, ${ratio(rows('1,000,000 rows, opaque'), rows('1,000,000 rows, ordered'))} at 1,000,000 rows
  failover: ${r.failover.failed} failed requests, longest request ${r.failover.maxMs} ms
  claim per chunk of 16 tickets: median ${r.claimCost[1]?.medianMs} ms vs ${r.claimCost[0]?.medianMs} ms for its REPLACEs and ${r.claimCost[2]?.medianMs} ms for the 0.2 mark write
  Snowflake (SDK, same run): nextSync() layout 41/6/16 / @sapphire/snowflake = ${ratio(sfAt(r, 'SDK Snowflake nextSync() (layout 41/6/16)'), sfAt(r, '@sapphire/snowflake'))} (target ≥ 1.0×; with 41/10/12 it is capped at 4,096 IDs per ms: ${ratio(sfAt(r, 'SDK Snowflake nextSync() (layout 41/10/12'), sfAt(r, '@sapphire/snowflake'))}, while sapphire repeated ${r.snowflake.sapphireRepeats} of ${r.snowflake.sapphireChecked.toLocaleString('en')} IDs)
  next() / await ceiling (same run): Snowflake 41/6/16 = ${ratio(sfAt(r, 'SDK Snowflake next() (layout 41/6/16)'), sfAt(r, 'await of an async function'))}, blocks of 1,000,000 = ${ratio(sdk?.idsPerSecond ?? 0, ceiling?.idsPerSecond ?? 0)} (target ≥ 0.9×)
  lease renewal: median ${r.snowflake.renewal.medianMs} ms, p99 ${r.snowflake.renewal.p99Ms} ms
  every ID checked: ${[...r.single, ...r.batch, ...r.workers, r.smallBlocks, r.failover, ...r.opaque.http, ...r.tls.backends, ...r.tls.clients, ...strictRows(r.strict)].every((x) => x.unique !== false) ? 'no duplicates' : 'DUPLICATES'}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench: ${error instanceof Error ? error.stack : String(error)}`);
    process.exit(1);
  },
);
