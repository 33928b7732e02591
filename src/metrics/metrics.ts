/**
 * Prometheus metrics through prom-client. Counters of events (fetches, failovers, regressions) are
 * fed by the allocator as they happen; gauges and per-sequence totals are read from the service
 * when scraped, so the request path pays nothing for them. Every series is declared in the tables
 * below; createMetrics only registers them.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AllocatorEvents } from '../allocator/events.js';
import { THIS_VERSION } from '../core/versions.js';
import type { TicketService } from '../service/ticket-service.js';
import type { WorkerEvents } from '../service/worker-leases.js';
import type { StrictEvents } from '../service/strict-sequence.js';
import type { WorkerPools } from '../service/worker-pools.js';

/** Latency buckets of one HTTP answer, in seconds: 0.25 ms to 2.5 s (the ids SLO reads the 25 ms one). */
export const HTTP_BUCKETS_SECONDS = Object.freeze([0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5]);

/** Latency buckets of one REPLACE run, in seconds: 0.5 ms to 2.5 s. */
export const FETCH_BUCKETS_SECONDS = Object.freeze([0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]);
const BREAKER_STATES = ['unknown', 'up', 'down', 'open', 'half-open'] as const;
const CLAIM_REFUSALS: readonly Parameters<AllocatorEvents['claimRefused']>[2][] = ['duplicate', 'below-floor'];
const LEASE_REFUSALS: readonly Parameters<WorkerEvents['refused']>[1][] = ['exhausted', 'lost', 'claimed'];

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
  /** Counts one HTTP answer: its route (as declared, `unmatched` for none), method, status and duration. */
  answered(route: string, method: string, status: number, seconds: number): void;
  /** Reads the service's state on every scrape (set once the service exists), and the pools' leases when given. */
  attach(service: TicketService, workers?: WorkerPools): void;
}

/** Clock skew buckets, in seconds: 1 ms to 10 s. */
export const SKEW_BUCKETS_SECONDS = Object.freeze([0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]);

/** The counters the allocator's events feed. */
const EVENT_COUNTERS = {
  fetches: { name: 'ticketd_ticket_fetches_total', help: 'Runs of REPLACE on a backend, per sequence, by result.', labelNames: ['backend', 'sequence', 'result'] },
  tickets: { name: 'ticketd_tickets_total', help: 'Tickets fetched from a backend, per sequence.', labelNames: ['backend', 'sequence'] },
  failovers: {
    name: 'ticketd_failovers_total',
    help: 'Refills that went to another backend because this one (first in turn) was unusable or failed.',
    labelNames: ['sequence', 'from'],
  },
  regressions: {
    name: 'ticketd_regressions_total',
    help: 'Counters found at or below a ticket already used (restored backup, lost log), by action taken.',
    labelNames: ['backend', 'sequence', 'action'],
  },
  claimsRefused: {
    name: 'ticketd_claims_refused_total',
    help: 'Chunks of tickets a peer refused to claim (issued before, or at or below the claim floor); none of their IDs were served.',
    labelNames: ['backend', 'sequence', 'reason'],
  },
  unclaimed: {
    name: 'ticketd_unclaimed_tickets_total',
    help: 'Tickets no peer could claim: served on the process marks alone (TICKETD_CLAIMS=preferred) or refused (required).',
    labelNames: ['backend', 'sequence'],
  },
  workerLeases: { name: 'ticketd_worker_leases_total', help: 'Worker-ID leases taken, renewed and released through this process, per pool.', labelNames: ['pool', 'event'] },
  workerRefused: {
    name: 'ticketd_worker_leases_refused_total',
    help: 'Lease requests refused, per pool: exhausted (no free worker ID), lost (a renewal of a lease no longer held), claimed (a claim on another backend held the worker ID).',
    labelNames: ['pool', 'reason'],
  },
  workerUnclaimed: {
    name: 'ticketd_worker_leases_unclaimed_total',
    help: 'Leases taken or renewed without a claim on every other backend (one did not answer).',
    labelNames: ['pool'],
  },
  reloads: {
    name: 'ticketd_config_reloads_total',
    help: 'Reloads of the token, certificate and key files (SIGHUP), by result: ok, or error (the old ones stay in force).',
    labelNames: ['result'],
  },
} as const;

/** One value of a series read at scrape time, with its label values. */
type Sample = readonly [labels: readonly string[], value: number];

/** A series read from the service at scrape time. `aggregator` says how --workers combines processes. */
interface ScrapedSeries {
  readonly type: 'counter' | 'gauge';
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly aggregator?: 'sum' | 'max' | 'min';
  read(service: TicketService | undefined): Sample[];
}

/** One sample per served sequence; undefined or null leaves the sequence out. */
function perSequence(value: (s: TicketService, sequence: string) => number | null | undefined): ScrapedSeries['read'] {
  return (service) =>
    (service?.servedSequences() ?? []).flatMap((sequence) => {
      const v = value(service!, sequence);
      return v === undefined || v === null ? [] : [[[sequence], v] as const];
    });
}

const SCRAPED: readonly ScrapedSeries[] = [
  {
    type: 'counter',
    name: 'ticketd_ids_issued_total',
    help: 'IDs handed out by this process, per sequence (blocks leased to clients not included).',
    labelNames: ['sequence'],
    read: perSequence((s, n) => s.cacheStatus(n)?.issued ?? 0),
  },
  { type: 'gauge', name: 'ticketd_cached_ids', help: 'IDs cached and not yet handed out, per sequence.', labelNames: ['sequence'], aggregator: 'sum', read: perSequence((s, n) => s.cacheStatus(n)?.available ?? 0) },
  {
    type: 'gauge',
    name: 'ticketd_sequence_max_id_used_ratio',
    help: 'Highest ID fetched divided by the sequence maxId (warning from 0.8, critical from 0.95).',
    labelNames: ['sequence'],
    aggregator: 'max',
    read: perSequence((s, n) => {
      const used = s.capacityStatus(n)?.usedPercent;
      return used === undefined ? undefined : used / 100;
    }),
  },
  {
    type: 'gauge',
    name: 'ticketd_sequence_ids_per_second',
    help: 'How fast the sequence frontier moved over the last minutes (all processes together).',
    labelNames: ['sequence'],
    aggregator: 'max',
    read: perSequence((s, n) => s.capacityStatus(n)?.idsPerSecond),
  },
  {
    type: 'gauge',
    name: 'ticketd_backend_up',
    help: '1 when the backend answered its last call (a refusal for want of a privilege is an answer), 0 when it failed or its breaker is open, -1 before any call.',
    labelNames: ['backend'],
    aggregator: 'min',
    read: (service) => (service?.backendStatus() ?? []).map((b) => [[b.backend], b.state === 'up' || b.state === 'refused' ? 1 : b.state === 'unknown' ? -1 : 0]),
  },
  {
    type: 'gauge',
    name: 'ticketd_backend_refused',
    help: '1 while the backend refuses statements its account lacks a privilege for (a missing GRANT; it answers, so it is not down), 0 otherwise.',
    labelNames: ['backend'],
    aggregator: 'max',
    read: (service) => (service?.backendStatus() ?? []).map((b) => [[b.backend], b.state === 'refused' ? 1 : 0]),
  },
  {
    type: 'gauge',
    name: 'ticketd_backend_breaker_state',
    help: 'Circuit breaker state per backend: 1 for the current state, 0 for the others.',
    labelNames: ['backend', 'state'],
    aggregator: 'max',
    // A refused backend's breaker is closed (shownState puts an outage first).
    read: (service) => (service?.backendStatus() ?? []).flatMap((b) => BREAKER_STATES.map((state): Sample => [[b.backend, state], (b.state === 'refused' ? 'up' : b.state) === state ? 1 : 0])),
  },
  {
    type: 'gauge',
    name: 'ticketd_sequence_retired',
    help: '1 for each sequence this process found retired: it issues nothing of it again.',
    labelNames: ['sequence'],
    aggregator: 'max',
    read: (service) => (service?.retiredSequences() ?? []).map((sequence) => [[sequence], 1]),
  },
  {
    type: 'gauge',
    name: 'ticketd_backend_tls',
    help: "1 when the backend's newest connection uses TLS (version says which), 0 when it is plaintext; no series before a connection.",
    labelNames: ['backend', 'version'],
    aggregator: 'min',
    read: (service) => (service?.backendStatus() ?? []).flatMap((b): Sample[] => (b.transport === undefined ? [] : [[[b.backend, b.transport.tls ? b.transport.version : 'plaintext'], b.transport.tls ? 1 : 0]])),
  },
  { type: 'gauge', name: 'ticketd_ready', help: '1 when an ID can be issued now.', labelNames: [], aggregator: 'min', read: (service) => [[[], service?.ready === true ? 1 : 0]] },
];

/** The series read from the service at scrape time (SCRAPED), in the registries given. */
function addScraped(registers: Registry[], service: () => TicketService | undefined): void {
  for (const { type, read, ...series } of SCRAPED) {
    const labelNames = [...series.labelNames];
    if (type === 'counter') {
      new Counter({ ...series, labelNames, registers, collect() {
        this.reset();
        for (const [labels, value] of read(service())) (labels.length === 0 ? this : this.labels(...labels)).inc(value);
      } });
    } else {
      new Gauge({ ...series, labelNames, registers, collect() {
        this.reset();
        for (const [labels, value] of read(service())) (labels.length === 0 ? this : this.labels(...labels)).set(value);
      } });
    }
  }
}

/** Counts HTTP answers and their durations (TicketdMetrics.answered). */
function httpAnswers(registers: Registry[]): TicketdMetrics['answered'] {
  const requests = new Counter({ name: 'ticketd_http_requests_total', help: 'HTTP answers, per route (as declared), method and status code.', labelNames: ['route', 'method', 'code'], registers });
  const durations = new Histogram({ name: 'ticketd_http_request_duration_seconds', help: 'Time from a request to its answer, per route and method.', labelNames: ['route', 'method'], buckets: [...HTTP_BUCKETS_SECONDS], registers });
  // Children looked up once per (route, method, status): a label lookup per answer costs more than the answer's counting.
  const answers = new Map<string, { count: Counter.Internal; time: Histogram.Internal<string> }>();
  return (route, method, status, seconds) => {
    const key = `${method} ${status} ${route}`;
    let child = answers.get(key);
    if (child === undefined) {
      child = { count: requests.labels(route, method, String(status)), time: durations.labels(route, method) };
      answers.set(key, child);
    }
    child.count.inc();
    child.time.observe(seconds);
  };
}

/** Creates the registry and its series. `processMetrics` adds prom-client's process_* and nodejs_* series. */
export function createMetrics(options: { processMetrics?: boolean } = {}): TicketdMetrics {
  const registry = new Registry();
  const registers = [registry];
  let service: TicketService | undefined;
  let workers: WorkerPools | undefined;
  // A labelled counter is born at its first increment, where Prometheus's increase() reads 0: the
  // alerts' counters are declared at 0 on every scrape for the label values known by then.
  const counter = (key: keyof typeof EVENT_COUNTERS, known: () => readonly string[][] = () => []): Counter =>
    new Counter({ ...EVENT_COUNTERS[key], labelNames: [...EVENT_COUNTERS[key].labelNames], registers, collect() {
      for (const labels of known()) this.labels(...labels).inc(0);
    } });
  const backendsAndSequences = (): string[][] => {
    const sequences = service?.servedSequences() ?? [];
    return (service?.backendStatus() ?? []).flatMap((b) => sequences.map((sequence) => [b.backend, sequence]));
  };
  const fetches = counter('fetches');
  const tickets = counter('tickets');
  const failovers = counter('failovers');
  const regressions = counter('regressions');
  const claimsRefused = counter('claimsRefused', () => backendsAndSequences().flatMap((pair) => CLAIM_REFUSALS.map((reason) => [...pair, reason])));
  const unclaimed = counter('unclaimed', backendsAndSequences);
  const workerLeases = counter('workerLeases');
  const workerRefused = counter('workerRefused', () => (workers?.served() ?? []).flatMap((pool) => LEASE_REFUSALS.map((reason) => [pool, reason])));
  const workerUnclaimed = counter('workerUnclaimed');
  const reloads = counter('reloads');
  const leaderChanges = new Counter({ name: 'ticketd_strict_leader_changes_total', help: 'Times this process became leader of a strict sequence (became) or stopped leading it (stopped).', labelNames: ['sequence', 'change'], registers });
  const forwardedCalls = new Counter({ name: 'ticketd_strict_forwarded_calls_total', help: 'Calls this process forwarded to a strict sequence\'s leader (each carries one or more requests).', labelNames: ['sequence'], registers });
  const forwardedRequests = new Counter({ name: 'ticketd_strict_forwarded_requests_total', help: 'Requests this process forwarded to a strict sequence\'s leader.', labelNames: ['sequence'], registers });
  const boundWrites = new Counter({ name: 'ticketd_strict_bound_writes_total', help: 'Lease renewals and bound writes of a strict sequence\'s leader, by result (ok: a majority took it).', labelNames: ['sequence', 'result'], registers });
  const stalls = new Histogram({ name: 'ticketd_strict_stall_seconds', help: 'How long a request of a strict sequence waited for a leader (an election, a failover, a not-leader retry).', labelNames: ['sequence'], buckets: [...HTTP_BUCKETS_SECONDS], registers });
  const skew = new Histogram({
    name: 'ticketd_worker_clock_skew_seconds',
    help: 'Clock skew between a Snowflake holder and the server, as the holder measured it at its renewal (absolute value), per pool.',
    labelNames: ['pool'],
    buckets: [...SKEW_BUCKETS_SECONDS],
    registers,
  });
  // Leases held and cooling down, read from the owners at scrape time, for the pools this process has served.
  for (const [name, help, pick] of [
    ['ticketd_worker_leases_held', 'Worker IDs leased now, per pool, as their owners hold them.', 'leased'],
    ['ticketd_worker_leases_cooling', 'Worker IDs whose lease expired unreleased and whose reuse delay has not passed, per pool.', 'cooling'],
    ['ticketd_worker_leases_free', 'Worker IDs free to lease now, per pool (of the owners that answered).', 'free'],
  ] as const) {
    new Gauge({ name, help, labelNames: ['pool'], registers, aggregator: 'max', async collect() {
      this.reset();
      for (const pool of workers?.served() ?? []) {
        const state = await workers!.state(pool).catch(() => undefined);
        if (state !== undefined) this.labels(pool).set(state[pick]);
      }
    } });
  }
  const latency = new Histogram({
    name: 'ticketd_ticket_fetch_duration_seconds',
    help: 'Duration of one run of REPLACEs on a backend, per sequence.',
    labelNames: ['backend', 'sequence'],
    buckets: [...FETCH_BUCKETS_SECONDS],
    registers,
  });
  addScraped(registers, () => service);
  // Which version each process runs: a rolling upgrade's mixed versions show as two series. `max`
  // under --workers: every worker of a process runs the same version (a sum would read 2).
  new Gauge({ name: 'ticketd_build_info', help: 'Always 1; the version label is the ticketd version this process runs.', labelNames: ['version'], registers, aggregator: 'max' }).labels(THIS_VERSION).set(1);
  if (options.processMetrics === true) collectDefaultMetrics({ register: registry });

  return {
    registry,
    attach: (s, w) => {
      service = s;
      workers = w;
    },
    reloaded: (result) => reloads.labels(result).inc(),
    answered: httpAnswers(registers),
    strictEvents: {
      leadership: (sequence, leading) => leaderChanges.labels(sequence, leading ? 'became' : 'stopped').inc(),
      forwarded: (sequence, requests) => {
        forwardedCalls.labels(sequence).inc();
        forwardedRequests.labels(sequence).inc(requests);
      },
      boundWrite: (sequence, ok) => boundWrites.labels(sequence, ok ? 'ok' : 'failed').inc(),
      stalled: (sequence, seconds) => stalls.labels(sequence).observe(seconds),
    },
    workerEvents: {
      taken: (pool) => workerLeases.labels(pool, 'taken').inc(),
      renewed: (pool) => workerLeases.labels(pool, 'renewed').inc(),
      released: (pool) => workerLeases.labels(pool, 'released').inc(),
      refused: (pool, reason) => workerRefused.labels(pool, reason).inc(),
      unclaimed: (pool) => workerUnclaimed.labels(pool).inc(),
      skew: (pool, ms) => skew.labels(pool).observe(Math.abs(ms) / 1000),
    },
    events: {
      ticketFetch: (backend, sequence, seconds, count, failed) => {
        fetches.labels(backend, sequence, failed ? 'error' : 'ok').inc();
        if (count > 0) tickets.labels(backend, sequence).inc(count);
        latency.labels(backend, sequence).observe(seconds);
      },
      failover: (sequence, from) => failovers.labels(sequence, from).inc(),
      regression: (backend, sequence, action) => regressions.labels(backend, sequence, action).inc(),
      claimRefused: (backend, sequence, reason) => claimsRefused.labels(backend, sequence, reason).inc(),
      unclaimed: (backend, sequence, count) => unclaimed.labels(backend, sequence).inc(count),
    },
  };
}
