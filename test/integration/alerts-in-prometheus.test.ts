/**
 * The alert rules in a real Prometheus (Debian's binary, started here on loopback) scraping a real
 * `ticketd serve` on two MariaDB backends: while both answer, TicketdBackendDown is quiet; once
 * backend B is killed (proven gone) it goes pending, then firing, for B alone; once B is back it
 * resolves. The rules are ticketd-rules.yml as shipped, but for TicketdBackendDown's `for:`,
 * shortened from 1m to 5s in the copy Prometheus loads so the test takes seconds, not minutes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/launcher/local-mysql.js';
import { sleep } from '../support/id-ledger.js';
import { dashboardQueries, prometheus, requirePrometheus } from '../support/prometheus.js';
import { putSequence, spawnTicketd, startPrivatePair, type ChildTicketd } from '../support/ticketd.js';

interface Alert {
  readonly labels: Record<string, string>;
  readonly state: 'pending' | 'firing';
}

describe('the backend-down alert in a real Prometheus', () => {
  if (!requirePrometheus('the Prometheus end-to-end alert test', prometheus)) return;
  let pair: Awaited<ReturnType<typeof startPrivatePair>>;
  let ticketd: ChildTicketd;
  let server: ChildProcess | undefined;
  let api = '';
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-prometheus-'));
  let running = true;
  let load: Promise<void> = Promise.resolve();

  beforeAll(async () => {
    pair = await startPrivatePair();
    ticketd = await spawnTicketd(pair.backendsUrl);
    // Small blocks: refills keep calling both backends, so a dead one is seen at once.
    expect(await putSequence(ticketd.url, 'alerting', { blockSize: 5 })).toBe(201);
    load = (async () => {
      while (running) {
        await fetch(`${ticketd.url}/v1/sequences/alerting/ids?count=5`, { method: 'POST' }).catch(() => undefined);
        await sleep(20);
      }
    })();
    const rules = readFileSync('deploy/prometheus/ticketd-rules.yml', 'utf8').replace(/(- alert: TicketdBackendDown\n\s+expr: [^\n]+\n\s+for: )1m/, '$15s');
    expect(rules).toContain('for: 5s');
    writeFileSync(join(dir, 'ticketd-rules.yml'), rules);
    const target = ticketd.url.replace('http://', '');
    writeFileSync(
      join(dir, 'prometheus.yml'),
      `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - ticketd-rules.yml\nscrape_configs:\n  - job_name: ticketd\n    static_configs:\n      - targets: ['${target}']\n`,
    );
    const port = await freePort();
    api = `http://127.0.0.1:${port}`;
    server = spawn(prometheus!, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      if ((await fetch(`${api}/-/ready`).catch(() => undefined))?.status === 200) return;
      await sleep(200);
    }
    throw new Error('prometheus did not become ready in 20 s');
  }, 60_000);

  afterAll(async () => {
    running = false;
    await load;
    server?.kill('SIGTERM');
    await new Promise((done) => (server?.exitCode !== null ? done(undefined) : server.once('exit', done)));
    await ticketd?.stop();
    await pair?.dispose();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  async function backendDown(): Promise<Alert[]> {
    const body = (await (await fetch(`${api}/api/v1/alerts`)).json()) as { data: { alerts: Alert[] } };
    return body.data.alerts.filter((a) => a.labels.alertname === 'TicketdBackendDown');
  }

  async function until(what: string, test: (alerts: Alert[]) => boolean, ms: number): Promise<number> {
    const started = Date.now();
    while (Date.now() - started < ms) {
      if (test(await backendDown())) return Date.now() - started;
      await sleep(250);
    }
    throw new Error(`${what} not seen within ${ms} ms; alerts: ${JSON.stringify(await backendDown())}`);
  }

  it('is quiet while both backends answer, pending then firing for B once it is killed, and resolved once it is back', async () => {
    // Both backends scraped as up first (the rule has data to judge), with no alert.
    await until('ticketd scraped', () => true, 1000);
    for (let i = 0; i < 40; i++) {
      const up = (await (await fetch(`${api}/api/v1/query?query=${encodeURIComponent('count(ticketd_backend_up == 1)')}`)).json()) as { data: { result: { value: [number, string] }[] } };
      if (up.data.result[0]?.value[1] === '2') break;
      await sleep(250);
    }
    expect(await backendDown()).toEqual([]);
    pair.b.signal('SIGKILL');
    await pair.b.exited();
    expect(pair.b.pid).toBeUndefined();
    const bLabel = pair.b.url.replace(/^mysql:\/\/root@/, 'mysql://');
    const onlyB = (alerts: Alert[], state: string): boolean => alerts.length === 1 && alerts[0]!.state === state && alerts[0]!.labels.backend === bLabel && alerts[0]!.labels.severity === 'critical';
    const pendingAfter = await until('pending', (a) => onlyB(a, 'pending'), 15_000);
    const firingAfter = await until('firing', (a) => onlyB(a, 'firing'), 20_000);
    await pair.b.restart();
    const resolvedAfter = await until('resolved', (a) => a.length === 0, 30_000);
    // Every query of the Grafana dashboard is one this Prometheus evaluates without an error.
    for (const expr of dashboardQueries()) {
      const answer = (await (await fetch(`${api}/api/v1/query?query=${encodeURIComponent(expr)}`)).json()) as { status: string; error?: string };
      expect([expr, answer.status, answer.error]).toEqual([expr, 'success', undefined]);
    }
    console.log(`alert in Prometheus: TicketdBackendDown pending ${pendingAfter} ms after B was killed, firing ${firingAfter} ms after that, resolved ${resolvedAfter} ms after B was back`);
  }, 90_000);
});
