/**
 * The Go client (clients/go) in its own process against the running ticketd: IDs/s handed out from
 * a buffered block (Next, NextNow, NextBatch), Snowflake IDs/s and the permutation's cost, beside
 * Go's in-process baseline (atomic.AddInt64) in the same run. The Go side (cmd/ticketd-bench)
 * checks every ID it measured for repeats.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InProcessResult } from './in-process.js';

// The bench runs from the repository's root (npm run bench), compiled into dist-bench/.
const CLIENT_DIR = join(process.cwd(), 'clients', 'go');
/** No module proxy, no toolchain download: the client is the standard library only. */
const GO_ENV = { GOFLAGS: '-mod=mod', GOPROXY: 'off', GOTOOLCHAIN: 'local' };

/** A sequence to measure: its name, how its blocks are described, and a client token when it needs one. */
export interface GoBenchSequence {
  readonly name: string;
  readonly blocks: string;
  readonly token?: string;
}

/** What the Go part of the bench measured. */
export interface GoClientResults {
  /** Which toolchain built it, e.g. "go1.19.8". */
  readonly go: string;
  readonly results: InProcessResult[];
  /** IDs checked for repeats (none found, or the run fails). */
  readonly checked: number;
}

/**
 * Builds cmd/ticketd-bench and measures the Go client on `sequences` (they must exist) and on two
 * worker pools it creates (bench_go_default, bench_go_wide). `go`: the toolchain (default `go` on PATH).
 */
export async function runGoClient(
  ticketdUrl: string,
  adminToken: string,
  sequences: readonly GoBenchSequence[],
  go = process.env['TICKETD_GO'] ?? 'go',
): Promise<GoClientResults> {
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-go-bench-'));
  try {
    const program = join(dir, 'ticketd-bench');
    const built = spawnSync(go, ['build', '-o', program, './cmd/ticketd-bench'], {
      cwd: CLIENT_DIR,
      env: { ...process.env, ...GO_ENV },
      encoding: 'utf8',
    });
    if (built.error !== undefined || built.status !== 0)
      throw new Error(`go build: ${built.error?.message ?? built.stderr.trim()} (apt-get install golang-go)`);
    const specs = sequences.map((s) => `${s.name}:${s.blocks.replace(/:/g, '')}:${s.token ?? ''}`);
    const child = spawn(program, [ticketdUrl, adminToken, ...specs], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const status = await new Promise<number | null>((done, fail) => {
      child.on('error', fail);
      child.on('close', done);
    });
    const line = stdout.trim().split('\n').pop() ?? '';
    if (status !== 0 || !line.startsWith('{'))
      throw new Error(`the Go client bench exited ${status}: ${stderr.slice(-2000)}`);
    const measured = JSON.parse(line) as GoClientResults;
    for (const r of measured.results) console.log(`  ${r.name}: ${r.idsPerSecond.toLocaleString('en')} IDs/s`);
    console.log(`  (${measured.go}; ${measured.checked.toLocaleString('en')} IDs checked, 0 repeated)`);
    return measured;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
