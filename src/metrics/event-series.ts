/**
 * The counters and histograms that ticketd's events feed as they happen (allocator, worker leases,
 * strict sequences), declared in one table, and the event handlers that count into them.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { AllocatorEvents } from '../allocator/events.js';
import type { TicketService } from '../service/ticket-service.js';
import type { WorkerEvents } from '../service/worker-leases.js';
import type { StrictEvents } from '../service/strict-sequence.js';
import type { WorkerPools } from '../service/worker-pools.js';

/** Latency buckets of one HTTP answer, in seconds: 0.25 ms to 2.5 s (the ids SLO reads the 25 ms one). */
export const HTTP_BUCKETS_SECONDS = Object.freeze([
  0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5,
]);

/** Latency buckets of one REPLACE run, in seconds: 0.5 ms to 2.5 s. */
export const FETCH_BUCKETS_SECONDS = Object.freeze([
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
]);

/** Clock skew buckets, in seconds: 1 ms to 10 s. */
export const SKEW_BUCKETS_SECONDS = Object.freeze([0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]);

const CLAIM_REFUSALS: readonly Parameters<AllocatorEvents['claimRefused']>[2][] = ['duplicate', 'below-floor'];
const LEASE_REFUSALS: readonly Parameters<WorkerEvents['refused']>[1][] = ['exhausted', 'lost', 'claimed'];

/** The counters the allocator's events feed. */
const EVENT_COUNTERS = {
  fetches: {
    name: 'ticketd_ticket_fetches_total',
    help: 'Runs of REPLACE on a backend, per sequence, by result.',
    labelNames: ['backend', 'sequence', 'result'],
  },
  tickets: {
    name: 'ticketd_tickets_total',
    help: 'Tickets fetched from a backend, per sequence.',
    labelNames: ['backend', 'sequence'],
  },
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
  workerLeases: {
    name: 'ticketd_worker_leases_total',
    help: 'Worker-ID leases taken, renewed and released through this process, per pool.',
    labelNames: ['pool', 'event'],
  },
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

/** One counter per entry of EVENT_COUNTERS. */
export type EventCounters = { readonly [K in keyof typeof EVENT_COUNTERS]: Counter };

/** Registers EVENT_COUNTERS; the alerts' counters are born at 0 for the label values `service` and `workers` know. */
export function eventCounters(
  registers: Registry[],
  service: () => TicketService | undefined,
  workers: () => WorkerPools | undefined,
): EventCounters {
  // A labelled counter is born at its first increment, where Prometheus's increase() reads 0: the
  // alerts' counters are declared at 0 on every scrape for the label values known by then.
  const counter = (key: keyof typeof EVENT_COUNTERS, known: () => readonly string[][] = () => []): Counter =>
    new Counter({
      ...EVENT_COUNTERS[key],
      labelNames: [...EVENT_COUNTERS[key].labelNames],
      registers,
      collect() {
        for (const labels of known()) this.labels(...labels).inc(0);
      },
    });
  const backendsAndSequences = (): string[][] => {
    const sequences = service()?.servedSequences() ?? [];
    return (service()?.backendStatus() ?? []).flatMap((b) => sequences.map((sequence) => [b.name, sequence]));
  };
  return {
    fetches: counter('fetches'),
    tickets: counter('tickets'),
    failovers: counter('failovers'),
    regressions: counter('regressions'),
    claimsRefused: counter('claimsRefused', () =>
      backendsAndSequences().flatMap((pair) => CLAIM_REFUSALS.map((reason) => [...pair, reason])),
    ),
    unclaimed: counter('unclaimed', backendsAndSequences),
    workerLeases: counter('workerLeases'),
    workerRefused: counter('workerRefused', () =>
      (workers()?.served() ?? []).flatMap((pool) => LEASE_REFUSALS.map((reason) => [pool, reason])),
    ),
    workerUnclaimed: counter('workerUnclaimed'),
    reloads: counter('reloads'),
  };
}

/** Strict sequences' leadership changes, forwarded calls, bound writes and stalls (TicketdMetrics.strictEvents). */
export function strictSeries(registers: Registry[]): StrictEvents {
  const leaderChanges = new Counter({
    name: 'ticketd_strict_leader_changes_total',
    help: 'Times this process became leader of a strict sequence (became) or stopped leading it (stopped).',
    labelNames: ['sequence', 'change'],
    registers,
  });
  const forwardedCalls = new Counter({
    name: 'ticketd_strict_forwarded_calls_total',
    help: "Calls this process forwarded to a strict sequence's leader (each carries one or more requests).",
    labelNames: ['sequence'],
    registers,
  });
  const forwardedRequests = new Counter({
    name: 'ticketd_strict_forwarded_requests_total',
    help: "Requests this process forwarded to a strict sequence's leader.",
    labelNames: ['sequence'],
    registers,
  });
  const boundWrites = new Counter({
    name: 'ticketd_strict_bound_writes_total',
    help: "Lease renewals and bound writes of a strict sequence's leader, by result (ok: a majority took it).",
    labelNames: ['sequence', 'result'],
    registers,
  });
  const stalls = new Histogram({
    name: 'ticketd_strict_stall_seconds',
    help: 'How long a request of a strict sequence waited for a leader (an election, a failover, a not-leader retry).',
    labelNames: ['sequence'],
    buckets: [...HTTP_BUCKETS_SECONDS],
    registers,
  });
  return {
    leadership: (sequence, leading) => leaderChanges.labels(sequence, leading ? 'became' : 'stopped').inc(),
    forwarded: (sequence, requests) => {
      forwardedCalls.labels(sequence).inc();
      forwardedRequests.labels(sequence).inc(requests);
    },
    boundWrite: (sequence, ok) => boundWrites.labels(sequence, ok ? 'ok' : 'failed').inc(),
    stalled: (sequence, seconds) => stalls.labels(sequence).observe(seconds),
  };
}

/** Worker-pool lease events (TicketdMetrics.workerEvents): the counters given, and the holders' clock skew. */
export function workerSeries(registers: Registry[], counters: EventCounters): WorkerEvents {
  const { workerLeases, workerRefused, workerUnclaimed } = counters;
  const skew = new Histogram({
    name: 'ticketd_worker_clock_skew_seconds',
    help: 'Clock skew between a Snowflake holder and the server, as the holder measured it at its renewal (absolute value), per pool.',
    labelNames: ['pool'],
    buckets: [...SKEW_BUCKETS_SECONDS],
    registers,
  });
  return {
    taken: (pool) => workerLeases.labels(pool, 'taken').inc(),
    renewed: (pool) => workerLeases.labels(pool, 'renewed').inc(),
    released: (pool) => workerLeases.labels(pool, 'released').inc(),
    refused: (pool, reason) => workerRefused.labels(pool, reason).inc(),
    unclaimed: (pool) => workerUnclaimed.labels(pool).inc(),
    skew: (pool, ms) => skew.labels(pool).observe(Math.abs(ms) / 1000),
  };
}

/** The allocator's events (TicketdMetrics.events): the counters given, and each fetch's duration. */
export function allocatorSeries(registers: Registry[], counters: EventCounters): AllocatorEvents {
  const { fetches, tickets, failovers, regressions, claimsRefused, unclaimed } = counters;
  const latency = new Histogram({
    name: 'ticketd_ticket_fetch_duration_seconds',
    help: 'Duration of one run of REPLACEs on a backend, per sequence.',
    labelNames: ['backend', 'sequence'],
    buckets: [...FETCH_BUCKETS_SECONDS],
    registers,
  });
  return {
    ticketFetch: (backend, sequence, seconds, count, failed) => {
      fetches.labels(backend, sequence, failed ? 'error' : 'ok').inc();
      if (count > 0) tickets.labels(backend, sequence).inc(count);
      latency.labels(backend, sequence).observe(seconds);
    },
    failover: (sequence, from) => failovers.labels(sequence, from).inc(),
    regression: (backend, sequence, action) => regressions.labels(backend, sequence, action).inc(),
    claimRefused: (backend, sequence, reason) => claimsRefused.labels(backend, sequence, reason).inc(),
    unclaimed: (backend, sequence, count) => unclaimed.labels(backend, sequence).inc(count),
  };
}
