/**
 * Scenario 11: one ID per request against node:http itself. wrk (server-bound: autocannon's own
 * JavaScript would share the cores and narrow every gap), in rounds, each ticketd row right after
 * the raw node:http row it is compared with: `GET …/next` and `POST …/ids?count=1` from the cache,
 * served by one process and by `serve --workers 2`. Server CPU per request comes from /proc (the
 * whole process tree). The IDs of these routes are checked for uniqueness in scenarios 1 and 3 and
 * in the autocannon row here.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HttpResult, Load } from './load.js';
import { serveTicketd } from './processes.js';
import { ensureWrk, wrkLoad, type WrkResult } from './wrk-load.js';

/** One comparison: a ticketd row and the raw node:http row measured just before it. */
export interface OneIdPair {
  readonly server: 'one process' | 'serve --workers 2';
  readonly route: 'next' | 'ids?count=1';
  readonly raw: WrkResult;
  readonly ticketd: WrkResult;
}

/** What scenario 11 measured. */
export interface OneIdResults {
  readonly pairs: OneIdPair[];
  /** `POST …/ids?count=1` through autocannon, every ID checked. */
  readonly checked: HttpResult;
}

const ROUNDS = 2;

/** Where the scenario's servers run. */
export interface OneIdTargets {
  /** The run's single-process ticketd, and its pid. */
  readonly ticketd: string;
  readonly ticketdPid: number;
  /** The raw node:http baseline (bench/baseline-servers.ts raw), and its pid. */
  readonly raw: string;
  readonly rawPid: number;
  /** Environment of a `serve --workers 2` started here. */
  readonly env: Record<string, string>;
}

/** Runs scenario 11. */
export async function measureOneId(
  load: Load,
  targets: OneIdTargets,
  options: { seconds: number; warmupSeconds: number; connections: number },
): Promise<OneIdResults> {
  const wrk = ensureWrk();
  const scriptDir = mkdtempSync(join(tmpdir(), 'ticketd-wrk-'));
  let workers: ChildProcess | undefined;
  try {
    const two = await serveTicketd(targets.env, 2);
    workers = two.child;
    const servers = [
      ['one process', targets.ticketd, targets.ticketdPid],
      ['serve --workers 2', two.url, two.child.pid!],
    ] as const;
    const routes = [
      ['next', '/v1/sequences/default/next', 'GET'],
      ['ids?count=1', '/v1/sequences/default/ids?count=1', 'POST'],
    ] as const;
    const pairs: OneIdPair[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const [server, base, pid] of servers) {
        for (const [route, path, method] of routes) {
          const run = (name: string, url: string, serverPid: number): WrkResult =>
            wrkLoad(wrk, { name, url: url + path, method, idsPerResponse: 1, serverPid, scriptDir, ...options });
          const raw = run(`node:http alone, ${route}`, targets.raw, targets.rawPid);
          pairs.push({ server, route, raw, ticketd: run(`ticketd (${server}), ${route}`, base, pid) });
        }
      }
    }
    const checked = await load({
      name: 'ticketd, ids?count=1',
      url: `${targets.ticketd}/v1/sequences/default/ids?count=1`,
      method: 'POST',
      idsPerResponse: 1,
      check: true,
    });
    return { pairs, checked };
  } finally {
    workers?.kill('SIGTERM');
    rmSync(scriptDir, { recursive: true, force: true });
  }
}

/** Mean over the rounds of ticketd / node:http requests per second, for one server and route. */
export function oneIdRatio(r: OneIdResults, server: OneIdPair['server'], route: OneIdPair['route']): number {
  const pairs = r.pairs.filter((p) => p.server === server && p.route === route);
  return (
    pairs.reduce((sum, p) => sum + p.ticketd.requestsPerSecond / Math.max(1, p.raw.requestsPerSecond), 0) /
    Math.max(1, pairs.length)
  );
}
