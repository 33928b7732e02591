/** Debian's prometheus package for the alert-rule tests: promtool and the server binary, found once. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The path of a binary on PATH (or /usr/bin), or undefined. */
function which(name: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${name} || ls /usr/bin/${name} 2>/dev/null`], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
  return found === undefined || found === '' ? undefined : found;
}

export const promtool = which('promtool');
export const prometheus = which('prometheus');

/**
 * Without the binaries a test says so once and does not run; with CI set it fails instead, since
 * .ci/run installs the package.
 */
export function requirePrometheus(what: string, binary: string | undefined): boolean {
  if (binary !== undefined) return true;
  if (process.env.CI !== undefined && process.env.CI !== '') {
    it(`${what} needs Debian's prometheus package (.ci/run installs it)`, () => {
      throw new Error(`${what}: no ${what.includes('promtool') ? 'promtool' : 'prometheus'} on PATH, although CI is set`);
    });
    return false;
  }
  console.log(`ticketd tests: ${what} did not run: no prometheus package here (apt-get install prometheus, without starting its service)`);
  it.skip(`${what} (no prometheus package on this machine)`, () => undefined);
  return false;
}

/** The Grafana dashboard's queries (deploy/grafana/ticketd-dashboard.json): its JSON must parse. */
export function dashboardQueries(): string[] {
  const dashboard = JSON.parse(readFileSync('deploy/grafana/ticketd-dashboard.json', 'utf8')) as { panels: { targets: { expr: string }[] }[] };
  return dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
}
