/**
 * The series read from the service at scrape time (gauges and per-sequence totals), declared in
 * one table: the request path pays nothing for them.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { TicketService } from '../service/ticket-service.js';
import type { WorkerPools } from '../service/worker-pools.js';

/** The one series whose labels say where a backend is: /metrics shows it to the admin only (http/visibility.ts). */
const BACKEND_INFO_SERIES = 'ticketd_backend_info';

const BREAKER_STATES = ['unknown', 'up', 'down', 'open', 'half-open'] as const;

/** One value of a series read at scrape time, with its label values. */
type Sample = readonly [labels: readonly string[], value: number];

/** A series read from the service at scrape time. `aggregator` says how --workers combines processes. */
interface ScrapedSeries {
  readonly type: 'counter' | 'gauge';
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly aggregator?: 'sum' | 'max' | 'min';
  readonly read: (service: TicketService | undefined) => Sample[];
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
  {
    type: 'gauge',
    name: 'ticketd_cached_ids',
    help: 'IDs cached and not yet handed out, per sequence.',
    labelNames: ['sequence'],
    aggregator: 'sum',
    read: perSequence((s, n) => s.cacheStatus(n)?.available ?? 0),
  },
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
    name: 'ticketd_sequence_seconds_left',
    help: 'Seconds until the sequence reaches its maxId at the rate of ticketd_sequence_ids_per_second; 0 once exhausted, no sample while there is no rate (in the first seconds, or before a second fetch).',
    labelNames: ['sequence'],
    // Under --workers the worker that fetched last has the newest frontier and the shortest figure.
    aggregator: 'min',
    read: perSequence((s, n) => s.capacityStatus(n)?.secondsLeft),
  },
  {
    type: 'gauge',
    name: 'ticketd_backend_up',
    help: '1 when the backend answered its last call (a refusal for want of a privilege is an answer), 0 when it failed or its breaker is open, -1 before any call.',
    labelNames: ['backend'],
    aggregator: 'min',
    read: (service) =>
      (service?.backendStatus() ?? []).map((b) => [
        [b.name],
        b.state === 'up' || b.state === 'refused' ? 1 : b.state === 'unknown' ? -1 : 0,
      ]),
  },
  {
    type: 'gauge',
    name: 'ticketd_backend_refused',
    help: '1 while the backend refuses statements its account lacks a privilege for (a missing GRANT; it answers, so it is not down), 0 otherwise.',
    labelNames: ['backend'],
    aggregator: 'max',
    read: (service) => (service?.backendStatus() ?? []).map((b) => [[b.name], b.state === 'refused' ? 1 : 0]),
  },
  {
    type: 'gauge',
    name: 'ticketd_backend_breaker_state',
    help: 'Circuit breaker state per backend: 1 for the current state, 0 for the others.',
    labelNames: ['backend', 'state'],
    aggregator: 'max',
    // A refused backend's breaker is closed (shownState puts an outage first).
    read: (service) =>
      (service?.backendStatus() ?? []).flatMap((b) =>
        BREAKER_STATES.map((state): Sample => [
          [b.name, state],
          (b.state === 'refused' ? 'up' : b.state) === state ? 1 : 0,
        ]),
      ),
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
    help: "1 when the backend's newest connection uses TLS, 0 when it is plaintext; no series before a connection (ticketd_backend_info has the version, for the admin).",
    labelNames: ['backend'],
    aggregator: 'min',
    read: (service) =>
      (service?.backendStatus() ?? []).flatMap((b): Sample[] =>
        b.transport === undefined ? [] : [[[b.name], b.transport.tls ? 1 : 0]],
      ),
  },
  {
    type: 'gauge',
    name: BACKEND_INFO_SERIES,
    help: 'Always 1: which server a backend name stands for (its label, server identity, TLS version and cipher). Shown with the admin token only.',
    labelNames: ['backend', 'address', 'identity', 'tls_version', 'tls_cipher'],
    aggregator: 'max',
    read: (service) =>
      (service?.backendStatus() ?? []).map((b): Sample => [
        [
          b.name,
          b.backend,
          b.identity ?? '',
          b.transport === undefined ? '' : b.transport.tls ? b.transport.version : 'plaintext',
          b.transport?.tls === true ? b.transport.cipher : '',
        ],
        1,
      ]),
  },
  {
    type: 'gauge',
    name: 'ticketd_ready',
    help: '1 when an ID can be issued now.',
    labelNames: [],
    aggregator: 'min',
    read: (service) => [[[], service?.ready === true ? 1 : 0]],
  },
];

/** The series read from the service at scrape time (SCRAPED), in the registries given. */
export function addScraped(registers: Registry[], service: () => TicketService | undefined): void {
  for (const { type, read, ...series } of SCRAPED) {
    const labelNames = [...series.labelNames];
    if (type === 'counter') {
      new Counter({
        ...series,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const [labels, value] of read(service()))
            (labels.length === 0 ? this : this.labels(...labels)).inc(value);
        },
      });
    } else {
      new Gauge({
        ...series,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const [labels, value] of read(service()))
            (labels.length === 0 ? this : this.labels(...labels)).set(value);
        },
      });
    }
  }
}

/** Leases held and cooling down, read from the owners at scrape time, for the pools this process has served. */
export function addLeaseGauges(registers: Registry[], workers: () => WorkerPools | undefined): void {
  for (const [name, help, pick] of [
    ['ticketd_worker_leases_held', 'Worker IDs leased now, per pool, as their owners hold them.', 'leased'],
    [
      'ticketd_worker_leases_cooling',
      'Worker IDs whose lease expired unreleased and whose reuse delay has not passed, per pool.',
      'cooling',
    ],
    ['ticketd_worker_leases_free', 'Worker IDs free to lease now, per pool (of the owners that answered).', 'free'],
    [
      'ticketd_worker_pool_time_field_seconds_left',
      "Seconds until the pool's Snowflake time field runs out, for the epoch and time bits TICKETD_SNOWFLAKE_EPOCH and TICKETD_SNOWFLAKE_TIME_BITS say the holders use.",
      'timeFieldSecondsLeft',
    ],
  ] as const) {
    new Gauge({
      name,
      help,
      labelNames: ['pool'],
      registers,
      aggregator: 'max',
      async collect() {
        this.reset();
        const pools = workers();
        for (const pool of pools?.served() ?? []) {
          const state = await pools!.state(pool).catch(() => undefined);
          if (state !== undefined)
            this.labels(pool).set(pick === 'timeFieldSecondsLeft' ? state.timeField.secondsLeft : state[pick]);
        }
      },
    });
  }
}
