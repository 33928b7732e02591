/**
 * Prometheus metrics through prom-client. Counters of events (fetches, failovers, regressions) are
 * fed by the allocator as they happen; gauges and per-sequence totals are read from the service
 * when scraped, so the request path pays nothing for them.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AllocatorEvents } from '../allocator/events.js';
import type { TicketService } from '../service/ticket-service.js';

/** Latency buckets of one REPLACE run, in seconds: 0.5 ms to 2.5 s. */
export const FETCH_BUCKETS_SECONDS = Object.freeze([0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]);
const BREAKER_STATES = ['unknown', 'up', 'down', 'open', 'half-open'] as const;

/** ticketd's metrics: a registry, and the allocator events that feed it. */
export interface TicketdMetrics {
  readonly registry: Registry;
  readonly events: AllocatorEvents;
  /** Reads the service's state on every scrape (set once the service exists). */
  attach(service: TicketService): void;
}

/** Creates the registry and its series. `processMetrics` adds prom-client's process_* and nodejs_* series. */
export function createMetrics(options: { processMetrics?: boolean } = {}): TicketdMetrics {
  const registry = new Registry();
  let service: TicketService | undefined;
  const registers = [registry];

  const fetches = new Counter({ name: 'ticketd_ticket_fetches_total', help: 'Runs of REPLACE on a backend, by result.', labelNames: ['backend', 'result'], registers });
  const tickets = new Counter({ name: 'ticketd_tickets_total', help: 'Tickets fetched from a backend.', labelNames: ['backend'], registers });
  const latency = new Histogram({
    name: 'ticketd_ticket_fetch_duration_seconds',
    help: 'Duration of one run of REPLACEs on a backend.',
    labelNames: ['backend'],
    buckets: [...FETCH_BUCKETS_SECONDS],
    registers,
  });
  const failovers = new Counter({
    name: 'ticketd_failovers_total',
    help: 'Refills that went to another backend because this one (first in turn) was unusable or failed.',
    labelNames: ['sequence', 'from'],
    registers,
  });
  const regressions = new Counter({
    name: 'ticketd_regressions_total',
    help: 'Counters found at or below a ticket already used (restored backup, lost log), by action taken.',
    labelNames: ['backend', 'sequence', 'action'],
    registers,
  });
  const claimsRefused = new Counter({
    name: 'ticketd_claims_refused_total',
    help: 'Chunks of tickets a peer refused to claim (issued before, or at or below the claim floor); none of their IDs were served.',
    labelNames: ['backend', 'sequence', 'reason'],
    registers,
  });
  const unclaimed = new Counter({
    name: 'ticketd_unclaimed_tickets_total',
    help: 'Tickets no peer could claim: served on the process marks alone (TICKETD_CLAIMS=preferred) or refused (required).',
    labelNames: ['backend', 'sequence'],
    registers,
  });

  new Counter({
    name: 'ticketd_ids_issued_total',
    help: 'IDs handed out by this process, per sequence (blocks leased to clients not included).',
    labelNames: ['sequence'],
    registers,
    collect() {
      this.reset();
      for (const name of service?.servedSequences() ?? []) this.labels(name).inc(service?.cacheStatus(name)?.issued ?? 0);
    },
  });
  /** A gauge per served sequence, read from the service at scrape time; undefined leaves it out. */
  const perSequence = (name: string, help: string, aggregator: 'sum' | 'max', value: (s: TicketService, sequence: string) => number | null | undefined): void => {
    new Gauge({
      name,
      help,
      labelNames: ['sequence'],
      registers,
      aggregator,
      collect() {
        this.reset();
        for (const sequence of service?.servedSequences() ?? []) {
          const v = value(service!, sequence);
          if (v !== undefined && v !== null) this.labels(sequence).set(v);
        }
      },
    });
  };
  perSequence('ticketd_cached_ids', 'IDs cached and not yet handed out, per sequence.', 'sum', (s, n) => s.cacheStatus(n)?.available ?? 0);
  perSequence(
    'ticketd_sequence_max_id_used_ratio',
    'Highest ID fetched divided by the sequence maxId (warning from 0.8, critical from 0.95).',
    'max',
    (s, n) => {
      const used = s.capacityStatus(n)?.usedPercent;
      return used === undefined ? undefined : used / 100;
    },
  );
  perSequence(
    'ticketd_sequence_ids_per_second',
    'How fast the sequence frontier moved over the last minutes (all processes together).',
    'max',
    (s, n) => s.capacityStatus(n)?.idsPerSecond,
  );
  new Gauge({
    name: 'ticketd_backend_up',
    help: '1 when the backend answered its last call, 0 when it failed or its breaker is open, -1 before any call.',
    labelNames: ['backend'],
    registers,
    aggregator: 'min',
    collect() {
      this.reset();
      for (const b of service?.backendStatus() ?? []) this.labels(b.backend).set(b.state === 'up' ? 1 : b.state === 'unknown' ? -1 : 0);
    },
  });
  new Gauge({
    name: 'ticketd_backend_breaker_state',
    help: 'Circuit breaker state per backend: 1 for the current state, 0 for the others.',
    labelNames: ['backend', 'state'],
    registers,
    aggregator: 'max',
    collect() {
      this.reset();
      for (const b of service?.backendStatus() ?? []) for (const state of BREAKER_STATES) this.labels(b.backend, state).set(b.state === state ? 1 : 0);
    },
  });
  new Gauge({
    name: 'ticketd_ready',
    help: '1 when an ID can be issued now.',
    registers,
    aggregator: 'min',
    collect() {
      this.set(service?.ready === true ? 1 : 0);
    },
  });
  if (options.processMetrics === true) collectDefaultMetrics({ register: registry });

  return {
    registry,
    attach: (s) => {
      service = s;
    },
    events: {
      ticketFetch: (backend, seconds, count, failed) => {
        fetches.labels(backend, failed ? 'error' : 'ok').inc();
        if (count > 0) tickets.labels(backend).inc(count);
        latency.labels(backend).observe(seconds);
      },
      failover: (sequence, from) => failovers.labels(sequence, from).inc(),
      regression: (backend, sequence, action) => regressions.labels(backend, sequence, action).inc(),
      claimRefused: (backend, sequence, reason) => claimsRefused.labels(backend, sequence, reason).inc(),
      unclaimed: (backend, sequence, count) => unclaimed.labels(backend, sequence).inc(count),
    },
  };
}
