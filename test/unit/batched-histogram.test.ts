import { AggregatorRegistry, Histogram, Registry } from 'prom-client';
import { BatchedHistogram } from '../../src/metrics/batched-histogram.js';
import { HTTP_BUCKETS_SECONDS } from '../../src/metrics/event-series.js';

/** Observations on every side of the buckets: on a bound, between bounds, past the last one, zero. */
const OBSERVED: readonly (readonly [string, string, number])[] = [
  ['/v1/sequences/:name/next', 'GET', 0.0001],
  ['/v1/sequences/:name/next', 'GET', 0.00025],
  ['/v1/sequences/:name/next', 'GET', 0.0007],
  ['/v1/sequences/:name/ids', 'POST', 0.3],
  ['/v1/sequences/:name/next', 'GET', 7],
  ['/v1/sequences/:name/ids', 'POST', 0],
  ['/v1/sequences/:name/next', 'GET', 2.5],
];

/** The same observations through prom-client's Histogram and through BatchedHistogram, each in a registry of its own. */
function both(): { theirs: Registry; ours: Registry } {
  const theirs = new Registry();
  const ours = new Registry();
  const name = 'ticketd_http_request_duration_seconds';
  const help = 'Time from a request to its answer, per route and method.';
  const histogram = new Histogram({
    name,
    help,
    labelNames: ['route', 'method'],
    buckets: [...HTTP_BUCKETS_SECONDS],
    registers: [theirs],
  });
  const batched = new BatchedHistogram({ name, help, buckets: HTTP_BUCKETS_SECONDS, registers: [ours] });
  const children = new Map<string, ReturnType<BatchedHistogram['child']>>();
  for (const [route, method, seconds] of OBSERVED) {
    histogram.labels(route, method).observe(seconds);
    const key = `${method} ${route}`;
    if (!children.has(key)) children.set(key, batched.child({ route, method }));
    children.get(key)!.observe(seconds);
  }
  return { theirs, ours };
}

describe('BatchedHistogram', () => {
  test('/metrics writes it exactly as prom-client writes its Histogram of the same observations', async () => {
    const { theirs, ours } = both();
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain(
      'ticketd_http_request_duration_seconds_bucket{le="0.00025",route="/v1/sequences/:name/next",method="GET"} 2',
    );
    expect(text).toContain(
      'ticketd_http_request_duration_seconds_count{route="/v1/sequences/:name/next",method="GET"} 5',
    );
  });

  test('serve --workers sums it across workers as it sums a prom-client Histogram', async () => {
    const theirs = [both().theirs, both().theirs];
    const ours = [both().ours, both().ours];
    const summed = async (registries: Registry[]): Promise<string> =>
      AggregatorRegistry.aggregate(await Promise.all(registries.map((r) => r.getMetricsAsJSON()))).metrics();
    const text = await summed(ours);
    expect(text).toBe(await summed(theirs));
    expect(text).toContain(
      'ticketd_http_request_duration_seconds_count{route="/v1/sequences/:name/ids",method="POST"} 4',
    );
  });

  test('resetMetrics() zeroes its counts (the label sets stay: the request path holds them)', async () => {
    const { ours } = both();
    ours.resetMetrics();
    const text = await ours.metrics();
    expect(text).toContain(
      'ticketd_http_request_duration_seconds_count{route="/v1/sequences/:name/next",method="GET"} 0',
    );
    expect(text).not.toMatch(/ [1-9][0-9]*$/m);
  });
});
