/**
 * Prometheus metrics through prom-client. Counters of events (fetches, failovers, regressions) are
 * fed by the allocator as they happen (event-series.ts); gauges and per-sequence totals are read
 * from the service when scraped (scraped-series.ts), so the request path pays nothing for them.
 * Every series is declared in those tables; createMetrics only registers them.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { AllocatorEvents } from '../allocator/events.js';
import { THIS_VERSION } from '../core/versions.js';
import type { TicketService } from '../service/ticket-service.js';
import type { WorkerEvents } from '../service/worker-leases.js';
import type { StrictEvents } from '../service/strict-sequence.js';
import type { WorkerPools } from '../service/worker-pools.js';
import { allocatorSeries, eventCounters, HTTP_BUCKETS_SECONDS, strictSeries, workerSeries } from './event-series.js';
import { addLeaseGauges, addScraped } from './scraped-series.js';
import { addUsageSeries } from './usage-series.js';
import { BatchedHistogram, type HistogramChild } from './batched-histogram.js';
import { DEFAULT_RUNS_OUT_WARNING_DAYS } from '../config/settings.js';

export { FETCH_BUCKETS_SECONDS, HTTP_BUCKETS_SECONDS, SKEW_BUCKETS_SECONDS } from './event-series.js';

/** ticketd's metrics: a registry, and the allocator events that feed it. */
export interface TicketdMetrics {
  readonly registry: Registry;
  readonly events: AllocatorEvents;
  /** Where worker-pool lease events are counted. */
  readonly workerEvents: WorkerEvents;
  /** Where strict sequences' leadership, forwarding and bound writes are counted. */
  readonly strictEvents: StrictEvents;
  /** Counts a reload of the secret files (SIGHUP). */
  reloaded(result: 'ok' | 'error'): void;
  /** Counts one request by its caller's token name (never the token): anonymous, unknown, peer, or a configured name. */
  readonly called: (token: string) => void;
  /** Counts one HTTP answer: its route (as declared, `unmatched` for none), method, status and duration. */
  readonly answered: (route: string, method: string, status: number, seconds: number) => void;
  /** Reads the service's state on every scrape (set once the service exists), and the pools' leases when given. */
  attach(service: TicketService, workers?: WorkerPools): void;
}

/** One (route, method, status)'s answers: counted in a plain number, timed in its histogram child. */
interface AnswerCount {
  readonly method: string;
  readonly status: number;
  readonly labels: { route: string; method: string; code: string };
  n: number;
  readonly time: HistogramChild;
}

/** Counts HTTP answers and their durations (TicketdMetrics.answered). */
function httpAnswers(registers: Registry[]): TicketdMetrics['answered'] {
  // Counted in plain numbers and handed to prom-client when scraped: its inc() builds a label key per call.
  const byRoute = new Map<string, AnswerCount[]>();
  new Counter({
    name: 'ticketd_http_requests_total',
    help: 'HTTP answers, per route (as declared), method and status code.',
    labelNames: ['route', 'method', 'code'],
    registers,
    collect() {
      for (const counts of byRoute.values()) {
        for (const c of counts) {
          this.inc(c.labels, c.n);
          c.n = 0;
        }
      }
    },
  });
  const durations = new BatchedHistogram({
    name: 'ticketd_http_request_duration_seconds',
    help: 'Time from a request to its answer, per route and method.',
    buckets: HTTP_BUCKETS_SECONDS,
    registers,
  });
  const timers = new Map<string, HistogramChild>();
  // Found by route (a constant string), then among its few (method, status) pairs: no key is built per answer.
  return (route, method, status, seconds) => {
    let counts = byRoute.get(route);
    if (counts === undefined) {
      counts = [];
      byRoute.set(route, counts);
    }
    let count: AnswerCount | undefined;
    for (const c of counts) {
      if (c.status === status && c.method === method) {
        count = c;
        break;
      }
    }
    if (count === undefined) {
      const timer = `${method} ${route}`;
      let time = timers.get(timer);
      if (time === undefined) {
        time = durations.child({ route, method });
        timers.set(timer, time);
      }
      count = { method, status, labels: { route, method, code: String(status) }, n: 0, time };
      counts.push(count);
    }
    count.n++;
    count.time.observe(seconds);
  };
}

/** Counts requests per caller (TicketdMetrics.called); the label's values are token names, a bounded set. */
function callerCounts(registers: Registry[]): TicketdMetrics['called'] {
  // Counted in plain numbers and handed to prom-client when scraped, as httpAnswers does.
  const counts = new Map<string, { n: number }>();
  new Counter({
    name: 'ticketd_requests_by_token_total',
    help: 'HTTP requests per caller: the name of the bearer token (anonymous without one, unknown for one not configured, peer for a front end of the fleet).',
    labelNames: ['token'],
    registers,
    collect() {
      for (const [token, c] of counts) {
        this.inc({ token }, c.n);
        c.n = 0;
      }
    },
  });
  return (token) => {
    let count = counts.get(token);
    if (count === undefined) {
      count = { n: 0 };
      counts.set(token, count);
    }
    count.n++;
  };
}

/** Creates the registry and its series. `processMetrics` adds prom-client's process_* and nodejs_* series. */
export function createMetrics(
  options: { processMetrics?: boolean; runsOutWarningSeconds?: number } = {},
): TicketdMetrics {
  const registry = new Registry();
  const registers = [registry];
  let service: TicketService | undefined;
  let workers: WorkerPools | undefined;
  // Registered in the order /metrics lists them: event counters, strict, worker, allocator, scraped.
  const counters = eventCounters(
    registers,
    () => service,
    () => workers,
  );
  const strictEvents = strictSeries(registers);
  const workerEvents = workerSeries(registers, counters);
  addLeaseGauges(registers, () => workers);
  const events = allocatorSeries(registers, counters);
  addScraped(registers, () => service);
  addUsageSeries(registers, () => service);
  // Which version each process runs: a rolling upgrade's mixed versions show as two series. `max`
  // under --workers: every worker of a process runs the same version (a sum would read 2).
  new Gauge({
    name: 'ticketd_build_info',
    help: 'Always 1; the version label is the ticketd version this process runs.',
    labelNames: ['version'],
    registers,
    aggregator: 'max',
  })
    .labels(THIS_VERSION)
    .set(1);
  // The operator's threshold as a series, so the alert compares two series and its rule is never edited.
  new Gauge({
    name: 'ticketd_sequence_seconds_left_warning',
    help: 'TICKETD_RUNS_OUT_WARNING_DAYS in seconds: a sequence with less time left than this (ticketd_sequence_seconds_left) is running out.',
    registers,
    aggregator: 'max',
  }).set(options.runsOutWarningSeconds ?? DEFAULT_RUNS_OUT_WARNING_DAYS * 86_400);
  if (options.processMetrics === true) collectDefaultMetrics({ register: registry });

  return {
    registry,
    attach: (s, w) => {
      service = s;
      workers = w;
    },
    reloaded: (result) => counters.reloads.labels(result).inc(),
    answered: httpAnswers(registers),
    called: callerCounts(registers),
    strictEvents,
    workerEvents,
    events,
  };
}
