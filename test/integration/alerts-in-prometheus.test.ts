/**
 * The alert rules in a real Prometheus (Debian's binary, started here on loopback) scraping a real
 * `ticketd serve` on two MariaDB backends: while both answer, TicketdBackendDown is quiet; once
 * backend B is killed (proven gone) it goes pending, then firing, for B alone; once B is back it
 * resolves. The rules are ticketd-rules.yml as shipped, but for TicketdBackendDown's `for:`,
 * shortened from 1m to 5s in the copy Prometheus loads so the test takes seconds, not minutes.
 * Then every alert built on increase() or rate() fires on its first episode: the counter it reads
 * is born at that episode's first event (issue 42: increase() alone read 0 there, and stayed silent).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/launcher/local-mysql.js';
import { sleep } from '../support/id-ledger.js';
import { parse as parseYaml } from 'yaml';
import type { RunningTicketd } from '../../src/server.js';
import {
  dashboardQueries,
  prometheus,
  requirePrometheus,
  startPrometheus,
  type PrometheusAlert,
  type RunningPrometheus,
} from '../support/prometheus.js';
import { restoreBackup, takeBackup } from '../support/regressions.js';
import {
  postIds,
  putSequence,
  spawnTicketd,
  startInProcess,
  startPrivatePair,
  type ChildTicketd,
} from '../support/ticketd.js';
import { poolName, putPool, send, takeLease } from '../support/worker-pools.js';

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
    const rules = readFileSync('deploy/prometheus/ticketd-rules.yml', 'utf8').replace(
      /(- alert: TicketdBackendDown\n\s+expr: [^\n]+\n\s+for: )1m/,
      '$15s',
    );
    expect(rules).toContain('for: 5s');
    writeFileSync(join(dir, 'ticketd-rules.yml'), rules);
    const target = ticketd.url.replace('http://', '');
    writeFileSync(
      join(dir, 'prometheus.yml'),
      `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - ticketd-rules.yml\nscrape_configs:\n  - job_name: ticketd\n    static_configs:\n      - targets: ['${target}']\n`,
    );
    const port = await freePort();
    api = `http://127.0.0.1:${port}`;
    server = spawn(
      prometheus!,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    );
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
      const up = (await (
        await fetch(`${api}/api/v1/query?query=${encodeURIComponent('count(ticketd_backend_up == 1)')}`)
      ).json()) as { data: { result: { value: [number, string] }[] } };
      if (up.data.result[0]?.value[1] === '2') break;
      await sleep(250);
    }
    expect(await backendDown()).toEqual([]);
    pair.b.signal('SIGKILL');
    await pair.b.exited();
    expect(pair.b.pid).toBeUndefined();
    // The alert names B as every metric does: by its name, whoever scrapes.
    const onlyB = (alerts: Alert[], state: string): boolean =>
      alerts.length === 1 &&
      alerts[0]!.state === state &&
      alerts[0]!.labels.backend === 'B' &&
      alerts[0]!.labels.severity === 'critical';
    const pendingAfter = await until('pending', (a) => onlyB(a, 'pending'), 15_000);
    const firingAfter = await until('firing', (a) => onlyB(a, 'firing'), 20_000);
    await pair.b.restart();
    const resolvedAfter = await until('resolved', (a) => a.length === 0, 30_000);
    // Every query of the Grafana dashboard is one this Prometheus evaluates without an error.
    for (const expr of dashboardQueries()) {
      const answer = (await (await fetch(`${api}/api/v1/query?query=${encodeURIComponent(expr)}`)).json()) as {
        status: string;
        error?: string;
      };
      expect([expr, answer.status, answer.error]).toEqual([expr, 'success', undefined]);
    }
    console.log(
      `alert in Prometheus: TicketdBackendDown pending ${pendingAfter} ms after B was killed, firing ${firingAfter} ms after that, resolved ${resolvedAfter} ms after B was back`,
    );
  }, 90_000);
});

/** The alerts whose expression (or a recording rule it reads) uses increase() or rate(), from the rules file. */
function alertsOnCounters(rulesText: string): string[] {
  const groups = (
    parseYaml(rulesText) as { groups: { rules: { alert?: string; record?: string; expr: string }[] }[] }
  ).groups.flatMap((g) => g.rules);
  const records = new Map(groups.flatMap((r) => (r.record === undefined ? [] : [[r.record, r.expr] as const])));
  const expanded = (expr: string): string =>
    [...records].reduce((e, [name, body]) => (e.includes(name) ? `${e} ${body}` : e), expr);
  return groups.flatMap((r) =>
    r.alert !== undefined && /\b(increase|rate)\(/.test(expanded(r.expr)) ? [r.alert] : [],
  );
}

describe('every alert on increase() or rate() fires on its first episode, in a real Prometheus', () => {
  if (!requirePrometheus('the Prometheus first-episode alert test', prometheus)) return;
  const RUNBOOKS = 'https://runbooks.example/ticketd/operating.md';
  const shipped = readFileSync('deploy/prometheus/ticketd-rules.yml', 'utf8');
  const expected = alertsOnCounters(shipped);
  const seen = new Map<string, PrometheusAlert>();
  let pair: Awaited<ReturnType<typeof startPrivatePair>>;
  let ticketd: ChildTicketd;
  let taker: RunningTicketd;
  let prom: RunningPrometheus;
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-prometheus-'));

  beforeAll(async () => {
    pair = await startPrivatePair();
    ticketd = await spawnTicketd(pair.backendsUrl, { TICKETD_CLAIMS: 'preferred' });
    taker = await startInProcess(pair.backendsUrl);
    // Created while both backends answer; none is asked for IDs before its episode, so each counter is born then.
    for (const [name, blockSize] of [
      ['rewound', 10],
      ['unclaimed', 1],
      ['slow', 100],
      ['dry', 10],
    ] as const) {
      expect(await putSequence(ticketd.url, name, { blockSize })).toBe(201);
    }
    // `for:` cut to 5 s in the copy Prometheus loads, so the test takes seconds, not minutes.
    const rules = shipped.replace(/for: \d+[smh]/g, 'for: 5s');
    prom = await startPrometheus({
      binary: prometheus!,
      dir,
      port: await freePort(),
      target: ticketd.url.replace('http://', ''),
      rules,
      externalLabels: { ticketd_runbooks: RUNBOOKS },
    });
    for (let i = 0; i < 80 && (await prom.query('ticketd_ready')).length === 0; i++) await sleep(250);
  }, 90_000);

  afterAll(async () => {
    await prom?.stop();
    await taker?.close();
    await ticketd?.stop();
    await pair?.dispose();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  async function firing(alertname: string, labels: Record<string, string>, ms = 20_000): Promise<PrometheusAlert> {
    const started = Date.now();
    while (Date.now() - started < ms) {
      const found = (await prom.alerts()).find(
        (a) =>
          a.labels.alertname === alertname &&
          a.state === 'firing' &&
          Object.entries(labels).every(([k, v]) => a.labels[k] === v),
      );
      if (found !== undefined) {
        seen.set(alertname, found);
        console.log(`first episode: ${alertname} firing ${Date.now() - started} ms after its episode`);
        return found;
      }
      await sleep(250);
    }
    throw new Error(
      `${alertname} ${JSON.stringify(labels)} not firing within ${ms} ms; alerts: ${JSON.stringify(await prom.alerts())}`,
    );
  }

  it('knows which alerts are built on increase() or rate()', () => {
    expect(expected).toEqual(
      expect.arrayContaining([
        'TicketdClaimsRefusedAsDuplicates',
        'TicketdUnclaimedTickets',
        'TicketdWorkerPoolExhausted',
        'TicketdWorkerClockSkew',
        'TicketdHigh5xxRate',
        'TicketdIdsLatencyBudgetBurn',
      ]),
    );
  });

  it('a pool of 4 worker IDs asked for 6 leases: TicketdWorkerPoolExhausted, with an absolute runbook link', async () => {
    const pool = poolName('four');
    expect((await putPool(ticketd.url, pool, { workerBits: 2 })).status).toBe(201);
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await takeLease(ticketd.url, pool, `holder-${i}`));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 503, 503]);
    const alert = await firing('TicketdWorkerPoolExhausted', { pool, reason: 'exhausted' });
    expect(alert.annotations.runbook_url).toBe(`${RUNBOOKS}#ticketdworkerpoolexhausted`);

    // A holder's first renewal that measured 3 s of skew: TicketdWorkerClockSkew.
    const lease = answers[0]!.body as { workerId: number; epoch: string };
    const renewed = await send(`${ticketd.url}/v1/worker-pools/${pool}/leases/${lease.workerId}/renew`, {
      epoch: lease.epoch,
      skewMs: 3000,
    });
    expect(renewed.status).toBe(200);
    await firing('TicketdWorkerClockSkew', { pool });
  }, 60_000);

  it("backend A's counter set back under tickets another process claimed: TicketdClaimsRefusedAsDuplicates", async () => {
    // The fault, done for real on A: its ticket table restored from a backup taken before another
    // process took tickets. This process served the sequence before (its check at load would catch it).
    expect(await postIds(ticketd.url, 'rewound', 10)).toHaveLength(10);
    const backup = (await takeBackup(pair.a.url)).filter((t) => t.table === 'tickets_rewound');
    expect(backup).toHaveLength(1);
    for (let i = 0; i < 10; i++)
      expect((await fetch(`${taker.url}/v1/sequences/rewound/ids?count=10`, { method: 'POST' })).status).toBe(200);
    await restoreBackup(pair.a.url, backup);
    const ids = new Set<string>();
    for (let i = 0; i < 10; i++) for (const id of await postIds(ticketd.url, 'rewound', 10)) ids.add(id);
    expect(ids.size).toBe(100);
    await firing('TicketdClaimsRefusedAsDuplicates', { backend: 'A', sequence: 'rewound' });
  }, 60_000);

  it('POST …/ids answers slower than 25 ms: both latency budget burns', async () => {
    // 10,000 IDs of a block size of 100: 100 tickets fetched and claimed for each answer.
    for (let i = 0; i < 6; i++) expect(await postIds(ticketd.url, 'slow', 10_000)).toHaveLength(10_000);
    await firing('TicketdIdsLatencyBudgetBurn', {});
    await firing('TicketdIdsLatencyBudgetBurnSlow', {});
  }, 90_000);

  it('backend B killed, 150 tickets of A served on the marks alone: TicketdUnclaimedTickets', async () => {
    pair.b.signal('SIGKILL');
    await pair.b.exited();
    expect(pair.b.pid).toBeUndefined();
    expect(await postIds(ticketd.url, 'unclaimed', 150)).toHaveLength(150);
    await firing('TicketdUnclaimedTickets', { backend: 'A', sequence: 'unclaimed' });
  }, 60_000);

  it('both backends dead and the cache empty: TicketdHigh5xxRate', async () => {
    pair.a.signal('SIGKILL');
    await pair.a.exited();
    let running = true;
    const statuses = new Map<number, number>();
    const load = (async () => {
      while (running) {
        const res = await fetch(`${ticketd.url}/v1/sequences/dry/ids?count=1`, { method: 'POST' }).catch(
          () => undefined,
        );
        if (res !== undefined) statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        await res?.arrayBuffer();
        await sleep(50);
      }
    })();
    try {
      await firing('TicketdHigh5xxRate', {}, 30_000);
    } finally {
      running = false;
      await load;
    }
    expect(statuses.get(503)).toBeGreaterThan(0);
  }, 60_000);

  it('saw each of them firing', () => {
    expect([...seen.keys()].sort()).toEqual([...expected].sort());
  });
});
