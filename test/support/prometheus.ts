/** Debian's prometheus package for the alert-rule tests: promtool and the server binary, found once. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The path of a binary on PATH (or /usr/bin), or undefined. */
function which(name: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${name} || ls /usr/bin/${name} 2>/dev/null`], { encoding: 'utf8' })
    .stdout.trim()
    .split('\n')[0];
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
      throw new Error(
        `${what}: no ${what.includes('promtool') ? 'promtool' : 'prometheus'} on PATH, although CI is set`,
      );
    });
    return false;
  }
  console.log(
    `ticketd tests: ${what} did not run: no prometheus package here (apt-get install prometheus, without starting its service)`,
  );
  it.skip(`${what} (no prometheus package on this machine)`, () => undefined);
  return false;
}

/** The Grafana dashboard's queries (deploy/grafana/ticketd-dashboard.json): its JSON must parse. */
export function dashboardQueries(): string[] {
  const dashboard = JSON.parse(readFileSync('deploy/grafana/ticketd-dashboard.json', 'utf8')) as {
    panels: { targets: { expr: string }[] }[];
  };
  return dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
}

/** An alert as Prometheus's /api/v1/alerts lists it. */
export interface PrometheusAlert {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly state: 'pending' | 'firing';
}

/** A Prometheus server of this test's own, on loopback. */
export interface RunningPrometheus {
  readonly api: string;
  /** The alerts now pending or firing. */
  alerts(): Promise<PrometheusAlert[]>;
  /** An instant query's result. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  stop(): Promise<void>;
}

/**
 * Starts Debian's prometheus in `dir` on a free loopback port, scraping `target` (host:port) and
 * evaluating `rules` every second, with the given external labels; resolves once it is ready.
 */
export async function startPrometheus(options: {
  binary: string;
  dir: string;
  port: number;
  target: string;
  rules: string;
  externalLabels?: Record<string, string>;
}): Promise<RunningPrometheus> {
  const { dir, port, target } = options;
  writeFileSync(join(dir, 'ticketd-rules.yml'), options.rules);
  const labels = Object.entries(options.externalLabels ?? {})
    .map(([k, v]) => `    ${k}: ${JSON.stringify(v)}\n`)
    .join('');
  writeFileSync(
    join(dir, 'prometheus.yml'),
    `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n${labels === '' ? '' : `  external_labels:\n${labels}`}rule_files:\n  - ticketd-rules.yml\nscrape_configs:\n  - job_name: ticketd\n    static_configs:\n      - targets: ['${target}']\n`,
  );
  const api = `http://127.0.0.1:${port}`;
  const server: ChildProcess = spawn(
    options.binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: 'ignore' },
  );
  const stop = async (): Promise<void> => {
    if (server.exitCode !== null || server.signalCode !== null) return;
    const exited = new Promise((done) => server.once('exit', done));
    server.kill('SIGTERM');
    await exited;
  };
  for (let i = 0; i < 100; i++) {
    if ((await fetch(`${api}/-/ready`).catch(() => undefined))?.status === 200) {
      return {
        api,
        stop,
        alerts: async () =>
          ((await (await fetch(`${api}/api/v1/alerts`)).json()) as { data: { alerts: PrometheusAlert[] } }).data.alerts,
        query: async (expr) =>
          (
            (await (await fetch(`${api}/api/v1/query?query=${encodeURIComponent(expr)}`)).json()) as {
              data: { result: { metric: Record<string, string>; value: [number, string] }[] };
            }
          ).data.result,
      };
    }
    await new Promise((done) => setTimeout(done, 200));
  }
  await stop();
  throw new Error('prometheus did not become ready in 20 s');
}
