/**
 * deploy/prometheus/ticketd-rules.yml as promtool judges it: the file is valid, every alert fires
 * in its unit test and stays quiet in the case beside it (ticketd-rules.test.yml), every alert has
 * a severity, a summary, a description and a runbook that exists in docs/operating.md, and every
 * metric a rule or the Grafana dashboard (deploy/grafana) reads is one a real ticketd's /metrics declares.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { dashboardQueries, promtool, requirePrometheus } from '../support/prometheus.js';
import { sharedBackends, startInProcess } from '../support/ticketd.js';

const RULES = 'deploy/prometheus/ticketd-rules.yml';
const TESTS = 'deploy/prometheus/ticketd-rules.test.yml';

interface Rule {
  readonly alert?: string;
  readonly record?: string;
  readonly expr: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}
const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
const alerts = rules.filter((r) => r.alert !== undefined);

describe('the Prometheus alert rules', () => {
  if (requirePrometheus('promtool check rules and promtool test rules', promtool)) {
    it('pass promtool check rules and promtool test rules', () => {
      const check = spawnSync(promtool!, ['check', 'rules', RULES], { encoding: 'utf8' });
      expect(check.stdout).toContain(`SUCCESS: ${rules.length} rules found`);
      expect(check.status).toBe(0);
      const test = spawnSync(promtool!, ['test', 'rules', 'ticketd-rules.test.yml'], {
        encoding: 'utf8',
        cwd: 'deploy/prometheus',
      });
      expect(`${test.stdout}${test.stderr}`).toContain('SUCCESS');
      expect(test.status).toBe(0);
    });
  }

  it('have a unit test in which each alert fires and one in which it stays quiet', () => {
    const cases = (
      parse(readFileSync(TESTS, 'utf8')) as {
        tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
      }
    ).tests.flatMap((t) => t.alert_rule_test);
    const missing = alerts.flatMap((a) => {
      const own = cases.filter((c) => c.alertname === a.alert);
      return [
        ...(own.some((c) => c.exp_alerts.length > 0) ? [] : [`${a.alert} never fires`]),
        ...(own.some((c) => c.exp_alerts.length === 0) ? [] : [`${a.alert} has no quiet case`]),
      ];
    });
    expect(missing).toEqual([]);
    expect(alerts.length).toBeGreaterThanOrEqual(12);
  });

  it('give every alert a severity, a summary, a description and a runbook in docs/operating.md, under the base the ticketd_runbooks external label sets', () => {
    const headings = new Set(
      [...readFileSync('docs/operating.md', 'utf8').matchAll(/^#{2,4} (.+)$/gm)].map((m) =>
        m[1]!
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    for (const a of alerts) {
      expect([a.alert, a.labels?.severity]).toEqual([a.alert, expect.stringMatching(/^(critical|warning)$/)]);
      expect(a.annotations?.summary).toBeTruthy();
      expect(a.annotations?.description).toBeTruthy();
      const anchor = /^\{\{ or \$externalLabels\.ticketd_runbooks "docs\/operating\.md" \}\}#(.+)$/.exec(
        a.annotations?.runbook_url ?? '',
      )?.[1];
      expect([a.alert, anchor !== undefined && headings.has(anchor)]).toEqual([a.alert, true]);
    }
  });

  it('and the dashboard read only metrics that a running ticketd declares on /metrics', async () => {
    const running = await startInProcess(sharedBackends());
    try {
      const text = await (await fetch(`${running.url}/metrics`)).text();
      const declared = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
      const used = new Set(
        [...rules.map((r) => r.expr), ...dashboardQueries()].flatMap((expr) =>
          [...expr.matchAll(/\b(ticketd_[a-z_]+)\b/g)].map((m) => m[1]!),
        ),
      );
      const unknown = [...used].filter((name) => {
        const histogram = /^(.*)_(bucket|count|sum)$/.exec(name);
        return !(declared.has(name) || (histogram !== null && declared.get(histogram[1]!) === 'histogram'));
      });
      expect(unknown).toEqual([]);
      expect(used.size).toBeGreaterThanOrEqual(12);
    } finally {
      await running.close();
    }
  });
});
