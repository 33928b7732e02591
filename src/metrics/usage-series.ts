/**
 * Usage accounting's series (docs/operating.md, "How many IDs were lost, and why"): this process's
 * own running totals per sequence, and the fleet's figures read from every backend's rows (at most
 * every FLEET_USAGE_MAX_AGE_MS, however often it is scraped). Opaque sequences' samples are left
 * out for anyone without the admin token, as every series with a sequence label (http/visibility.ts).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { LOSS_REASONS, type UsageCounts } from '../core/usage.js';
import type { FleetUsage } from '../core/fleet-usage.js';
import type { TicketService } from '../service/ticket-service.js';

/** This process's counters: one value per sequence, read from its figures at scrape time. */
const OWN: readonly { name: string; help: string; pick: (c: UsageCounts) => number }[] = [
  {
    name: 'ticketd_ids_leased_total',
    help: "IDs this process took from the backends, per sequence: its cache's refills and blocks leased to clients.",
    pick: (c) => c.leased,
  },
  {
    name: 'ticketd_ids_handed_out_total',
    help: 'IDs this process handed out, per sequence: over HTTP and the fast path, and whole blocks leased to clients.',
    pick: (c) => c.handedOut,
  },
  {
    name: 'ticketd_ids_returned_total',
    help: 'Unused IDs this process gave back for others to hand out, per sequence.',
    pick: (c) => c.returned,
  },
  {
    name: 'ticketd_ids_reclaimed_total',
    help: 'IDs given back by a front end that this process leased again, per sequence (counted in ticketd_ids_leased_total too).',
    pick: (c) => c.reclaimed,
  },
];

/** The fleet's figures, per sequence, as every front end's rows on the backends say. */
const FLEET = [
  ['ticketd_sequence_ids_leased', 'IDs all front ends took from the backends, per sequence (usage rows).', 'leased'],
  ['ticketd_sequence_ids_handed_out', 'IDs all front ends handed out, per sequence (usage rows).', 'handedOut'],
  ['ticketd_sequence_ids_returned', 'IDs all front ends gave back, per sequence (usage rows).', 'returned'],
  ['ticketd_sequence_ids_cached', 'IDs the running front ends held at their last write, per sequence.', 'cached'],
] as const;

/** Registers the usage series; `service` is read at every scrape. */
export function addUsageSeries(registers: Registry[], service: () => TicketService | undefined): void {
  for (const { name, help, pick } of OWN) {
    new Counter({
      name,
      help,
      labelNames: ['sequence'],
      registers,
      collect() {
        this.reset();
        for (const [sequence, counts] of service()?.usageFigures() ?? []) this.labels(sequence).inc(pick(counts));
      },
    });
  }
  new Counter({
    name: 'ticketd_ids_abandoned_total',
    help: 'IDs this process leased and will never hand out, per sequence and reason: shutdown (left cached at a clean stop), retired (cached when the sequence was retired), surplus (a second block of a hedged refill for a client).',
    labelNames: ['sequence', 'reason'],
    registers,
    collect() {
      this.reset();
      for (const [sequence, counts] of service()?.usageFigures() ?? [])
        for (const reason of LOSS_REASONS)
          if (reason !== 'crash') this.labels(sequence, reason).inc(counts.abandoned[reason]);
    },
  });
  addFleetGauges(registers, service);
}

/** The fleet's figures as every gauge reads them: one read shared by a scrape's gauges (FLEET_USAGE_MAX_AGE_MS), none when it failed. */
async function fleetNow(service: () => TicketService | undefined): Promise<readonly FleetUsage[]> {
  const read = await service()
    ?.fleetUsage({ cached: true })
    .catch(() => undefined);
  return read?.sequences ?? [];
}

function addFleetGauges(registers: Registry[], service: () => TicketService | undefined): void {
  // Every process reads the same rows: under --workers, the primary keeps one worker's value (max), not their sum.
  new Gauge({
    name: 'ticketd_sequence_ids_lost',
    help: 'IDs of the sequence that all front ends leased and nobody will receive, per reason: shutdown, retired, surplus, and crash (a front end that stopped writing its figures without saying it stopped: its cache, and what it handed out since its last write).',
    labelNames: ['sequence', 'reason'],
    aggregator: 'max',
    registers,
    async collect() {
      this.reset();
      for (const s of await fleetNow(service))
        for (const reason of LOSS_REASONS) this.labels(s.sequence, reason).set(s.lost[reason]);
    },
  });
  for (const [name, help, pick] of FLEET) {
    new Gauge({
      name,
      help,
      labelNames: ['sequence'],
      aggregator: 'max',
      registers,
      async collect() {
        this.reset();
        for (const s of await fleetNow(service)) this.labels(s.sequence).set(s[pick]);
      },
    });
  }
}
