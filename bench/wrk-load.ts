/**
 * Server-bound load with wrk, a C load generator: autocannon's own JavaScript cost shares the two
 * cores with the server and narrows every gap between two routes of it. Besides the rates, each run
 * reads the server process's CPU time from /proc, so a route's cost per 1,000 IDs is measured, not
 * inferred. wrk is a Debian package; the bench installs it when missing and it can (root).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What one wrk run measured. */
export interface WrkResult {
  readonly name: string;
  readonly requestsPerSecond: number;
  readonly idsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  /** Server CPU (user + system, every thread) per 1,000 IDs served, in milliseconds. */
  readonly cpuMsPer1000Ids: number;
  /** Share of one core the server used during the run. */
  readonly serverCpuShare: number;
  readonly non2xx: number;
}

/** The path of wrk, installing it from Debian packages when it is missing and this process may. */
export function ensureWrk(): string {
  const found = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).stdout.trim();
  if (found !== '') return found;
  if (process.getuid?.() === 0) {
    console.log('bench: wrk is not on PATH; installing it from Debian packages');
    spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'wrk'], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    const installed = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).stdout.trim();
    if (installed !== '') return installed;
  }
  throw new Error('wrk is not on PATH and could not be installed: apt-get install wrk');
}

/** CPU time a process and its descendants (the workers of `serve --workers`) have used so far, in milliseconds (utime + stime of every thread). */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at state, the 3rd field.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const perSecond = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
  return (
    (ticks * 1000) / perSecond +
    childrenOf(pid).reduce((sum, child) => sum + (existsSync(`/proc/${child}/stat`) ? processCpuMs(child) : 0), 0)
  );
}

/** The living children of a process, from /proc/<pid>/task/<tid>/children. */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter((x) => x !== '')
        .map(Number),
    );
  } catch {
    return [];
  }
}

/** Options of one run. */
export interface WrkRun {
  readonly name: string;
  readonly url: string;
  readonly method?: 'GET' | 'POST';
  readonly idsPerResponse: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly connections: number;
  /** The server process, whose CPU time is read around the run. */
  readonly serverPid: number;
  readonly scriptDir: string;
}

/** Runs wrk (one thread: the server keeps the other core) after a warm-up, and reads its report. */
export function wrkLoad(wrk: string, run: WrkRun): WrkResult {
  const script = join(run.scriptDir, `wrk-${run.method ?? 'GET'}.lua`);
  writeFileSync(script, `wrk.method = "${run.method ?? 'GET'}"\n`);
  const args = (seconds: number): string[] => [
    '-t1',
    `-c${run.connections}`,
    `-d${seconds}s`,
    '--latency',
    '-s',
    script,
    run.url,
  ];
  if (run.warmupSeconds > 0) spawnSync(wrk, args(run.warmupSeconds), { encoding: 'utf8' });
  const cpuBefore = processCpuMs(run.serverPid);
  const started = performance.now();
  const out = spawnSync(wrk, args(run.seconds), { encoding: 'utf8' });
  const elapsedMs = performance.now() - started;
  const cpuMs = processCpuMs(run.serverPid) - cpuBefore;
  if (out.status !== 0) throw new Error(`wrk failed on ${run.url}: ${out.stderr}`);
  const text = out.stdout;
  const requestsPerSecond = Number(/Requests\/sec:\s+([0-9.]+)/.exec(text)?.[1] ?? 0);
  const requests = Number(/(\d+) requests in/.exec(text)?.[1] ?? 0);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0);
  const ids = (requests - non2xx) * run.idsPerResponse;
  return {
    name: run.name,
    requestsPerSecond,
    idsPerSecond: requestsPerSecond * run.idsPerResponse,
    p50: latencyMs(text, '50%'),
    p99: latencyMs(text, '99%'),
    cpuMsPer1000Ids: ids === 0 ? 0 : Math.round((cpuMs / ids) * 1000 * 1000) / 1000,
    serverCpuShare: Math.round((cpuMs / elapsedMs) * 100) / 100,
    non2xx,
  };
}

/** A percentile of wrk's latency distribution, in milliseconds. */
function latencyMs(text: string, percentile: string): number {
  const match = new RegExp(`^\\s*${percentile}\\s+([0-9.]+)(us|ms|s)$`, 'm').exec(text);
  if (match === null) return 0;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}
