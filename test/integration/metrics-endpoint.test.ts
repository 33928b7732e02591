import { putSequence, useSharedServer } from '../support/ticketd.js';

/** The value of one series in Prometheus text, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  const context = useSharedServer();

  it('exposes issued IDs, fetch latency histograms, breaker states and capacity, in Prometheus text', async () => {
    expect([200, 201]).toContain(
      await putSequence(context.server.url, 'metrics_seq', { blockSize: 10, maxId: 100_000 }),
    );
    for (let i = 0; i < 30; i++) {
      const res = await fetch(`${context.server.url}/v1/sequences/metrics_seq/ids?count=10`, { method: 'POST' });
      expect(res.status).toBe(200);
    }
    const res = await fetch(`${context.server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(sample(text, 'ticketd_ids_issued_total{sequence="metrics_seq"}')).toBe(300);
    expect(sample(text, 'ticketd_ready')).toBe(1);
    const used = sample(text, 'ticketd_sequence_max_id_used_ratio{sequence="metrics_seq"}')!;
    expect(used).toBeGreaterThan(0.003);
    expect(used).toBeLessThan(1);
    expect(sample(text, 'ticketd_cached_ids{sequence="metrics_seq"}')).toBeGreaterThanOrEqual(0);
    // Named as everyone sees them (A, B), whoever scrapes.
    expect(context.server.service.backendStatus().map((b) => b.name)).toEqual(['A', 'B']);
    for (const backend of context.server.service.backendStatus().map((b) => b.name)) {
      expect(sample(text, `ticketd_backend_breaker_state{backend="${backend}",state="up"}`)).toBe(1);
      expect(sample(text, `ticketd_backend_up{backend="${backend}"}`)).toBe(1);
      expect(
        sample(text, `ticketd_ticket_fetches_total{backend="${backend}",sequence="metrics_seq",result="ok"}`),
      ).toBeGreaterThan(0);
      const count = sample(
        text,
        `ticketd_ticket_fetch_duration_seconds_count{backend="${backend}",sequence="metrics_seq"}`,
      )!;
      expect(count).toBeGreaterThan(0);
      // Cumulative buckets: +Inf holds every observation.
      expect(
        sample(
          text,
          `ticketd_ticket_fetch_duration_seconds_bucket{le="+Inf",backend="${backend}",sequence="metrics_seq"}`,
        ),
      ).toBe(count);
    }
    expect(text).toMatch(/^# TYPE ticketd_failovers_total counter$/m);
    expect(text).toMatch(/^# TYPE ticketd_regressions_total counter$/m);
  });
});
