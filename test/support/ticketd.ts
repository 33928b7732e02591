/** Helpers for integration tests: real backends from the launcher, real ticketd servers. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import mysql, { type RowDataPacket } from 'mysql2/promise';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Allocator } from '../../src/allocator/allocator.js';
import { loadConfig, type ConfigInput } from '../../src/config/load-config.js';
import {
  backendOptionFile,
  findServerBinary,
  startLocalServer,
  type LocalServer,
  type ServerBinary,
} from '../../src/launcher/local-mysql.js';
import { startLocalPair, type LocalPair } from '../../src/launcher/local-pair.js';
import { createLogger, silentLogger, type Logger } from '../../src/logger.js';
import { startTicketd, type RunningTicketd } from '../../src/server.js';
import { initBackends } from '../../src/service/init.js';
import { TicketService } from '../../src/service/ticket-service.js';

/** Admin token used by every test server. */
export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789';

/** TICKETD_BACKENDS of the pair started by test/support/global-setup.js. */
export function sharedBackends(): string {
  const url = process.env.TICKETD_TEST_BACKENDS;
  if (url === undefined)
    throw new Error('TICKETD_TEST_BACKENDS is unset: run through npm test, whose globalSetup starts the shared pair');
  return url;
}

/** A ticketd in this process on a free port of 127.0.0.1. */
export function startInProcess(
  backends: string,
  settings: ConfigInput = {},
  logger: Logger = silentLogger,
): Promise<RunningTicketd> {
  const config = loadConfig({ backends, port: '0', adminToken: TEST_ADMIN_TOKEN, ...settings });
  return startTicketd({ config, logger, host: '127.0.0.1' });
}

/** A logger that keeps every line as a parsed object, for tests that check structured fields. */
export function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return {
    logger: createLogger('info', {
      write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
    }),
    lines,
  };
}

/** A pair of backends of this test's own (for tests that kill or stop them), initialised; `binary` picks the engine. */
export async function startPrivatePair(binary?: ServerBinary): Promise<LocalPair & { dispose(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-test-'));
  const pair = await startLocalPair(dir, binary);
  await initialise(pair.backendsUrl);
  return {
    ...pair,
    dispose: async () => {
      await pair.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Three backends of a test's own under `dir` (offsets 1, 2 and 3 of 16), initialised: a majority
 * (two) stays when one is killed or hung. Stopping them is the caller's.
 */
export async function startThreeBackends(
  dir: string,
): Promise<{ readonly servers: LocalServer[]; readonly backends: string }> {
  const binary = findServerBinary(process.env.TICKETD_MYSQLD, process.env.PATH);
  const servers: LocalServer[] = [];
  for (const [name, file, extra] of [
    ['a', 'a', []],
    ['b', 'b', []],
    ['c', 'a', ['--auto-increment-offset=3']],
  ] as const) {
    servers.push(
      await startLocalServer({
        name,
        optionFile: backendOptionFile(file),
        dir: join(dir, name),
        binary,
        extraArgs: [...extra],
      }),
    );
  }
  const backends = servers.map((s) => s.url).join(',');
  await initialise(backends);
  return { servers, backends };
}

/** `ticketd init` on the backends, in this process. */
async function initialise(backends: string): Promise<void> {
  const allocator = new Allocator({ backends: loadConfig({ backends }).backends, logger: silentLogger });
  const service = new TicketService({ allocator, logger: silentLogger });
  await initBackends(allocator, service).finally(() => service.close());
}

/** A ticketd started as its own process from the build (`node dist/cli/main.js serve`). */
export interface ChildTicketd {
  readonly url: string;
  /** Every log line it has written so far. */
  readonly logs: string[];
  readonly process: ChildProcess;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Spawns `ticketd serve` and resolves once it listens; `main` may be an earlier release's CLI, `port`
 * a fixed one (a restart on the same address), a free one by default.
 */
export function spawnTicketd(
  backends: string,
  extraEnv: Record<string, string> = {},
  main = 'dist/cli/main.js',
  port = 0,
): Promise<ChildTicketd> {
  const child = spawn(process.execPath, [main, 'serve', '--port', String(port)], {
    env: { ...process.env, TICKETD_BACKENDS: backends, TICKETD_ADMIN_TOKEN: TEST_ADMIN_TOKEN, ...extraEnv },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return new Promise((done, fail) => {
    const lines = createInterface({ input: child.stdout });
    const logs: string[] = [];
    const timer = setTimeout(() => fail(new Error('ticketd did not start within 60 s')), 60_000);
    lines.on('line', (line) => {
      logs.push(line);
      const match = /"port":(\d+).*"msg":"ticketd listening"/.exec(line);
      if (match === null) return;
      clearTimeout(timer);
      done({
        url: `http://127.0.0.1:${match[1]}`,
        logs,
        process: child,
        stop: (signal = 'SIGTERM') => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      });
    });
    void exited.then((code) => fail(new Error(`ticketd exited with ${code} before listening`)));
  });
}

/** POST /ids and the IDs it returned (throws on a non-200). */
export async function postIds(base: string, sequence: string, count: number): Promise<string[]> {
  const res = await fetch(`${base}/v1/sequences/${sequence}/ids?count=${count}`, { method: 'POST' });
  if (res.status !== 200) throw new Error(`POST ids: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { ids: string[] }).ids;
}

/** GET /next and its ID (throws on a non-200). */
export async function nextId(base: string, sequence: string): Promise<string> {
  const res = await fetch(`${base}/v1/sequences/${sequence}/next`);
  if (res.status !== 200) throw new Error(`GET next: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/**
 * The sum of a metric's samples on a running ticketd's /metrics, over the samples whose labels
 * include every pair in `labels` (e.g. { action: 'quarantined' }).
 */
export async function metricSum(base: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const pairs = new Map([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    if (Object.entries(labels).every(([k, v]) => pairs.get(k) === v)) sum += Number(match[3]);
  }
  return sum;
}

/** Regressions and refused claims reported for a backend, summed over running ticketd servers. */
export async function regressionReports(urls: readonly string[], backend: string): Promise<number> {
  let total = 0;
  for (const url of urls) {
    total += await metricSum(url, 'ticketd_regressions_total', { backend });
    total += await metricSum(url, 'ticketd_claims_refused_total', { backend });
  }
  return total;
}

/** PUT a sequence as admin; returns the status. */
export async function putSequence(base: string, name: string, body: object): Promise<number> {
  const res = await fetch(`${base}/v1/sequences/${name}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Runs SQL on a local server as root (to break or restore its settings in a test). */
export async function sqlOn(serverUrl: string, ...statements: string[]): Promise<void> {
  const conn = await mysql.createConnection(serverUrl);
  try {
    for (const statement of statements) await conn.query(statement);
  } finally {
    await conn.end();
  }
}

/** Runs the built CLI and returns its exit status and output. */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['dist/cli/main.js', ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...env },
    timeout: 30_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr.trim() };
}

/**
 * Runs the built CLI (or `command`, e.g. a bash script) without blocking this process, for
 * commands that call a ticketd running in it.
 */
export function runCliAsync(
  args: string[],
  env: Record<string, string> = {},
  command: string[] = [process.execPath, 'dist/cli/main.js'],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(command[0]!, [...command.slice(1), ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((done) => child.once('close', (status) => done({ status, stdout, stderr: stderr.trim() })));
}

/** Kills every other client connection on a local server, so that clients must reconnect. */
export async function killConnections(serverUrl: string): Promise<void> {
  const conn = await mysql.createConnection(serverUrl);
  try {
    const [rows] = await conn.query<RowDataPacket[]>(
      "SELECT id FROM information_schema.PROCESSLIST WHERE id <> CONNECTION_ID() AND command <> 'Daemon'",
    );
    for (const row of rows) await conn.query(`KILL ${Number(row.id)}`).catch(() => undefined);
  } finally {
    await conn.end();
  }
}

/** Registers beforeAll/afterAll hooks for a private pair with one in-process ticketd on it. */
export function usePrivatePairAndServer(binary?: ServerBinary): {
  readonly pair: LocalPair & { dispose(): Promise<void> };
  readonly server: RunningTicketd;
} {
  const context = {} as { pair: LocalPair & { dispose(): Promise<void> }; server: RunningTicketd };
  beforeAll(async () => {
    context.pair = await startPrivatePair(binary);
    context.server = await startInProcess(context.pair.backendsUrl);
  });
  afterAll(async () => {
    await context.server?.close();
    await context.pair?.dispose();
  });
  return context;
}

/** Registers beforeAll/afterAll hooks for one in-process ticketd on the shared pair. */
export function useSharedServer(): { readonly server: RunningTicketd } {
  const context = {} as { server: RunningTicketd };
  beforeAll(async () => {
    context.server = await startInProcess(sharedBackends());
  });
  afterAll(async () => {
    await context.server?.close();
  });
  return context;
}

/** A legacy application's server: no ticketd option file, its own temp directory, database `shop`. */
export async function startLegacyServer(
  binary?: ServerBinary,
): Promise<{ readonly url: string; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-legacy-'));
  const server = await startLocalServer({
    name: 'legacy',
    dir,
    binary: binary ?? findServerBinary(process.env.TICKETD_MYSQLD, process.env.PATH),
  });
  const url = server.url.replace(/\/ticketd$/, '/shop');
  await sqlOn(server.url, 'CREATE DATABASE shop');
  return {
    url,
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once GET /readyz answers 200 (a front end started again, ready to issue); throws after 20 s. */
export async function waitReady(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const status = await fetch(`${url}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url}/readyz did not answer 200 within 20 s`);
}
