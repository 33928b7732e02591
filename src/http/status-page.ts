/**
 * The status page at `/`: first the overall state (ok, degraded, down) in plain words, then
 * backends, sequences and a chart of IDs per second, as this process sees them. One HTML page with
 * inline SVG, no script; it refreshes itself.
 */
import type { BackendStatus } from '../allocator/allocator.js';
import type { ActivityPoint } from '../service/activity.js';
import type { TicketService } from '../service/ticket-service.js';
import type { PoolState } from '../service/worker-pools.js';
import { poolSize } from '../core/worker-leases.js';
import { ERROR_SHOWN_TO_ADMIN, namesOf } from './backend-names.js';
import type { ProcessTotals } from './process-totals.js';
import { countedFor, type Counted } from './visibility.js';
import { LOSS_REASONS } from '../core/usage.js';
import type { FleetUsage } from '../core/fleet-usage.js';
import { escapeHtml, formatRate, formatSpan, formatTimeLeft, group } from './human-figures.js';
import { renderChart } from './status-chart.js';

/** Seconds between refreshes of the page. */
export const STATUS_REFRESH_SECONDS = 5;
/** A pool's row is marked when its time field has less than a year left (the TicketdSnowflakeTimeFieldEnding alert's threshold). */
const TIME_FIELD_WARNING_SECONDS = 365 * 86_400;

/** What the page says about the process beside the service's state. */
export interface StatusPageInfo {
  readonly version: string;
  /** When this process started serving (ms since the epoch). */
  readonly startedAt: number;
  readonly now: number;
  /** IDs handed out and cached by the whole process (every worker), as /metrics counts them. */
  readonly totals?: ProcessTotals;
  /** The fleet's usage figures of the sequences the page may show (ordered and strict ones); undefined when unread. */
  readonly usage?: readonly FleetUsage[];
  /** A sequence with less time left than this is marked, as the alert would (TICKETD_RUNS_OUT_WARNING_DAYS). */
  readonly runsOutWarningSeconds?: number;
}

/** The overall state: every backend usable, some not (still issuing), or none and no cache. */
export type OverallState = 'ok' | 'degraded' | 'down';

/**
 * The overall state and the one sentence that explains it: a clause per backend with a problem
 * (named by its letter, as `ticketd dev` and the backends table name them), counting sequences
 * rather than listing them, so it stays one sentence however many there are.
 */
export function overallState(service: TicketService): { state: OverallState; words: string } {
  if (!service.ready)
    return {
      state: 'down',
      words: 'Down: no backend can issue tickets and no IDs are cached. Requests get 503 until a backend answers.',
    };
  const backends = service.backendStatus();
  const lanes = service.servedSequences().map((name) => service.backendsFor(name));
  const clauses = backends.flatMap((b) => {
    const name = `backend ${b.name}`;
    const mine = lanes.map((list) => list.find((l) => l.backend === b.backend));
    const quarantined = mine.filter((l) => l !== undefined && l.quarantined !== null).length;
    // Told as it is now: once another backend answers, it can record this one's tickets again.
    const peerUp = backends.some((other) => other !== b && other.state === 'up');
    const unclaimed = peerUp ? 0 : mine.filter((l) => l?.unclaimed === true).length;
    return [
      ...(b.state === 'down'
        ? [`${name} is failing`]
        : b.state === 'open' || b.state === 'half-open'
          ? [`${name} is down`]
          : b.state === 'refused'
            ? [`${name} refuses a statement its account may not run`]
            : []),
      ...(quarantined > 0 ? [`${name} is quarantined for ${plural(quarantined, 'sequence')}`] : []),
      ...(unclaimed > 0 ? [`no other backend can record ${name}'s tickets for ${plural(unclaimed, 'sequence')}`] : []),
    ];
  });
  if (clauses.length === 0)
    return { state: 'ok', words: `OK: all ${plural(backends.length, 'backend')} answer; IDs are issued.` };
  return { state: 'degraded', words: `Degraded: ${inWords(clauses)}; IDs are still issued.` };
}

/** Renders the page; every value shown is escaped. */
export function renderStatusPage(
  service: TicketService,
  activity: readonly ActivityPoint[],
  info: StatusPageInfo,
  pools: readonly PoolState[] = [],
): string {
  const served = service.servedSequences();
  const overall = overallState(service);
  // The page is open to all: no figure of an opaque sequence is on it (visibility.ts).
  const counted = countedFor(service, false);
  const backends = backendRows(service, served.filter(counted));
  const sequences = sequenceRows(service, served, counted, info);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="${STATUS_REFRESH_SECONDS}"><title>ticketd status: ${overall.state}</title>
<style>
body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin-bottom:1.5em}
td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}th{background:#f4f4f4}
tr.up td:nth-child(2){color:#176b2c;font-weight:bold}tr.down td{background:#fde8e8}
svg{border:1px solid #ccc;background:#fbfbfb}.muted{color:#777}
#overall{font-size:18px;padding:10px 14px;border-radius:6px}
#overall.ok{background:#e6f4ea;color:#176b2c}#overall.degraded{background:#fff4d6;color:#7a5200}#overall.down{background:#fde8e8;color:#a11}
</style>
</head><body>
<h1>ticketd <span class="muted">${escapeHtml(info.version)}</span></h1>
<p id="overall" class="${overall.state}">${escapeHtml(overall.words)}</p>
<p class="muted">up ${escapeHtml(formatSpan(Math.max(0, Math.round((info.now - info.startedAt) / 1000))))} · ${escapeHtml(new Date(info.now).toISOString())} · refreshes every ${STATUS_REFRESH_SECONDS} s ·
<a href="/metrics">metrics</a> · <a href="/readyz">readiness</a> · <a href="/openapi.json">API (OpenAPI)</a></p>
<h2>Backends</h2>
<p class="muted">Backends are named by their place in TICKETD_BACKENDS (A is the first): the page is open to all, so addresses, accounts and error texts are the admin's (GET /readyz with the token).</p>
<table id="backends"><tr><th>backend</th><th>status</th><th>circuit breaker</th><th>tickets it issues</th><th>last ticket, by sequence</th><th>last error and its time (shown only while it is still happening)</th></tr>${backends}</table>
<h2>Sequences served by this process</h2>
<table id="sequences"><tr><th>sequence</th><th>IDs</th><th>block size</th><th>IDs handed out by this process (all workers)</th><th>IDs cached in this process (all workers)</th><th>IDs/s taken in blocks by all processes (last 5 min)</th><th>share of maxId taken</th><th>time left at that rate</th><th>runs out at</th><th>state</th></tr>${sequences}</table>
<p class="muted">An opaque sequence's figures would tell its volume: they are shown only with the admin token (GET /v1/sequences/{name}, /metrics).</p>
${usageSection(info.usage)}
${
  pools.length === 0
    ? ''
    : `<h2>Snowflake worker pools</h2>
<table id="pools"><tr><th>pool</th><th>worker IDs</th><th>leased</th><th>cooling down</th><th>free</th><th>lease TTL</th><th>owners not answering</th><th>time field lasts (epoch, time bits)</th></tr>${poolRows(pools, namesOf(service).scrub)}</table>`
}
<h2>IDs of ordered sequences issued per second by the worker that answered</h2>
${renderChart(activity)}
</body></html>
`;
}

/**
 * IDs lost, by every front end (docs/operating.md, "How many IDs were lost, and why"): of the
 * sequences the page may show, from the figures each front end writes to the backends.
 */
function usageSection(usage: readonly FleetUsage[] | undefined): string {
  const heading = `<h2>IDs lost, over every front end</h2>`;
  if (usage === undefined) return `${heading}\n<p class="muted">No backend answered with the usage figures.</p>`;
  const rows = usage.map((u) =>
    row(
      [
        u.sequence,
        group(u.handedOut),
        group(u.lostTotal),
        u.lossRatio === null ? '' : `${(u.lossRatio * 100).toFixed(2)}%`,
        ...LOSS_REASONS.map((reason) => group(u.lost[reason])),
        group(u.cached),
        group(u.returned),
        `${u.instances.running} running, ${u.instances.stopped} stopped, ${u.instances.crashed} crashed`,
      ],
      u.lost.crash > 0 ? 'down' : '',
    ),
  );
  return `${heading}
<table id="usage"><tr><th>sequence</th><th>IDs handed out</th><th>IDs lost</th><th>share lost</th>${LOSS_REASONS.map((r) => `<th>lost: ${r}</th>`).join('')}<th>IDs cached now</th><th>IDs given back</th><th>front ends</th></tr>${rows.join('')}</table>
<p class="muted">Lost: leased from the backends and never handed out: left cached at a clean stop (shutdown), cached when the sequence was retired, a hedged refill's second block for a client (surplus), or held by a front end that stopped writing its figures without saying it stopped (crash: its cache, and what it handed out in its last seconds).</p>`;
}

/** One row per worker pool: how many worker IDs are leased, cooling down after an expiry, and free. */
function poolRows(pools: readonly PoolState[], scrub: (text: string) => string): string {
  return pools
    .map((p) =>
      row(
        [
          p.pool.name,
          group(poolSize(p.pool)),
          group(p.leased),
          group(p.cooling),
          group(p.free),
          `${p.pool.ttlMs / 1000} s`,
          scrub(p.unanswered.join(', ')),
          `${formatTimeLeft(p.timeField.secondsLeft)}, until ${new Date(p.timeField.endsMs).toISOString().slice(0, 10)} (${new Date(p.timeField.epochMs).toISOString().slice(0, 10)}, ${p.timeField.timeBits} bits)`,
        ],
        p.free === 0 || p.unanswered.length > 0 || p.timeField.secondsLeft < TIME_FIELD_WARNING_SECONDS ? 'down' : '',
      ),
    )
    .join('');
}

/** One row per backend: its state, breaker, residue class and last ticket of each served sequence. */
function backendRows(service: TicketService, served: readonly string[]): string {
  return service
    .backendStatus()
    .map((b) => {
      const tickets = served
        .map((name) => [name, service.backendsFor(name).find((s) => s.backend === b.backend)?.lastTicket] as const)
        .filter(([, t]) => t !== null && t !== undefined)
        .map(([name, t]) => `${name}: ${group(t!)}`)
        .join(', ');
      const words = stateWords(b.state);
      // An error of a backend that answers again is history, not its state: shown only while it
      // is still happening, with the time it last happened.
      const lastError = b.failing && b.lastErrorAt !== undefined ? `${b.lastErrorAt}: ${ERROR_SHOWN_TO_ADMIN}` : '';
      return row(
        [b.name, words, breakerWords(b), residueWords(b), tickets, lastError],
        words === 'up' ? 'up' : words === 'not asked yet' ? '' : 'down',
      );
    })
    .join('');
}

/** One row per sequence this process serves: its settings, and its cache and capacity where `counted` admits them. */
function sequenceRows(
  service: TicketService,
  served: readonly string[],
  counted: Counted,
  { totals, runsOutWarningSeconds = Number.POSITIVE_INFINITY }: StatusPageInfo,
): string {
  const retired = service
    .retiredSequences()
    .map((name) => row([name, '', '', '', '', '', '', '', '', 'retired'], 'muted'));
  return (
    retired.join('') +
    served
      .map((name) => {
        const settings = service.servedSettings(name);
        if (!counted(name))
          return row([
            name,
            settings?.ids ?? '',
            group(settings?.blockSize ?? ''),
            'not shown',
            'not shown',
            'not shown',
            'not shown',
            'not shown',
            'not shown',
            'not shown',
          ]);
        const cache = service.cacheStatus(name);
        const capacity = service.capacityStatus(name);
        return row(
          [
            name,
            settings?.ids ?? '',
            group(settings?.blockSize ?? ''),
            group(totals?.issued.get(name) ?? cache?.issued ?? 0),
            group(totals?.cached.get(name) ?? cache?.available ?? 0),
            capacity?.idsPerSecond === undefined || capacity.idsPerSecond === null
              ? ''
              : formatRate(capacity.idsPerSecond),
            capacity === undefined ? '' : `${capacity.usedPercent}%`,
            capacity === undefined ? '' : formatTimeLeft(capacity.secondsLeft),
            capacity?.projectedExhaustionAt ?? '',
            capacity?.level ?? (cache?.exhausted ? 'exhausted' : 'ok'),
          ],
          capacity === undefined ||
            (capacity.level === 'ok' && (capacity.secondsLeft ?? Infinity) >= runsOutWarningSeconds)
            ? ''
            : 'down',
        );
      })
      .join('')
  );
}

/** A backend's state as the page's status column says it: the same for every state /readyz reports. */
export function stateWords(state: BackendStatus['state']): 'up' | 'refused' | 'down' | 'not asked yet' {
  if (state === 'up') return 'up';
  if (state === 'refused') return 'refused';
  return state === 'unknown' ? 'not asked yet' : 'down';
}

/** Which tickets a backend issues, in words: odd, even, or every Nth from its offset. */
function residueWords(b: BackendStatus): string {
  if (b.stripe === undefined) return 'not known yet';
  const { increment, offset } = b.stripe;
  if (increment === '2') return offset === '1' ? 'odd tickets' : 'even tickets';
  return `every ${group(increment)}th ticket, starting at ${group(offset)}`;
}

function breakerWords(b: BackendStatus): string {
  const words: Record<string, string> = {
    unknown: 'not asked yet',
    up: 'closed',
    down: 'closed, last call failed',
    open: 'open (skipped, probed in the background)',
    'half-open': 'probing',
    refused: 'closed, its account refused a statement',
  };
  return words[b.state] ?? b.state;
}

/** `a`, `a and b`, `a, b and c`. */
function inWords(parts: readonly string[]): string {
  return parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function row(cells: string[], className = ''): string {
  return `<tr${className === '' ? '' : ` class="${className}"`}>${cells.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`;
}
