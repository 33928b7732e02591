/**
 * The status page at `/`: backends, sequences and a chart of IDs per second, as this process sees
 * them. One HTML page with inline SVG, no script; it refreshes itself.
 */
import { ACTIVITY_SAMPLE_MS, type ActivityPoint } from '../service/activity.js';
import type { TicketService } from '../service/ticket-service.js';

/** Seconds between refreshes of the page. */
export const STATUS_REFRESH_SECONDS = 5;
const CHART_WIDTH = 600;
const CHART_HEIGHT = 120;

/** Renders the page; every value shown is escaped. */
export function renderStatusPage(service: TicketService, activity: readonly ActivityPoint[], now: number = Date.now()): string {
  const served = service.servedSequences();
  const backends = service
    .backendStatus()
    .map((b) => {
      const tickets = served
        .map((name) => [name, service.backendsFor(name).find((s) => s.backend === b.backend)?.lastTicket] as const)
        .filter(([, t]) => t !== null && t !== undefined)
        .map(([name, t]) => `${name}: ${t}`)
        .join(', ');
      const up = b.state === 'up' || b.state === 'half-open';
      return row(
        [b.backend, up ? 'up' : b.state === 'unknown' ? 'unknown' : 'down', b.state, b.stripe ? `≡ ${b.stripe.offset} (mod ${b.stripe.increment})` : '?', tickets, b.lastError ?? ''],
        up ? 'up' : b.state === 'unknown' ? '' : 'down',
      );
    })
    .join('');
  const sequences = served
    .map((name) => {
      const settings = service.servedSettings(name);
      const cache = service.cacheStatus(name);
      const capacity = service.capacityStatus(name);
      return row(
        [
          name,
          String(settings?.blockSize ?? ''),
          String(cache?.issued ?? 0),
          String(cache?.available ?? 0),
          capacity?.idsPerSecond === undefined || capacity.idsPerSecond === null ? '' : formatRate(capacity.idsPerSecond),
          capacity === undefined ? '' : `${capacity.usedPercent}%`,
          capacity?.projectedExhaustionAt ?? '',
          capacity?.level ?? (cache?.exhausted ? 'exhausted' : 'ok'),
        ],
        capacity === undefined || capacity.level === 'ok' ? '' : 'down',
      );
    })
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="${STATUS_REFRESH_SECONDS}"><title>ticketd status</title>
<style>
body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin-bottom:1.5em}
td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}th{background:#f4f4f4}
tr.up td:nth-child(2){color:#176b2c;font-weight:bold}tr.down td{background:#fde8e8}
svg{border:1px solid #ccc;background:#fbfbfb}.muted{color:#777}
</style>
</head><body>
<h1>ticketd</h1>
<p id="ready">${service.ready ? 'ready: IDs can be issued' : 'NOT READY: no backend usable and no cached IDs'} <span class="muted">· ${escapeHtml(new Date(now).toISOString())} · refreshes every ${STATUS_REFRESH_SECONDS} s</span></p>
<h2>Backends</h2>
<table id="backends"><tr><th>backend</th><th>status</th><th>breaker</th><th>tickets</th><th>last ticket</th><th>last error</th></tr>${backends}</table>
<h2>Sequences served by this process</h2>
<table id="sequences"><tr><th>sequence</th><th>block size</th><th>issued here</th><th>cached</th><th>IDs/s (all processes)</th><th>maxId used</th><th>runs out</th><th>state</th></tr>${sequences}</table>
<h2>IDs issued per second by this process</h2>
${renderChart(activity)}
</body></html>
`;
}

/** An inline SVG line chart of the activity points, scaled to the largest. */
export function renderChart(points: readonly ActivityPoint[]): string {
  const max = Math.max(1, ...points.map((p) => p.idsPerSecond));
  const step = points.length > 1 ? CHART_WIDTH / (points.length - 1) : 0;
  const coords = points.map((p, i) => `${(i * step).toFixed(1)},${(CHART_HEIGHT - (p.idsPerSecond / max) * (CHART_HEIGHT - 10)).toFixed(1)}`).join(' ');
  const latest = points[points.length - 1];
  const caption =
    points.length === 0
      ? `no samples yet (one every ${ACTIVITY_SAMPLE_MS / 1000} s)`
      : `latest ${formatRate(latest!.idsPerSecond)} IDs/s, peak ${formatRate(max)} IDs/s, over the last ${formatSpan(points.length * (ACTIVITY_SAMPLE_MS / 1000))}`;
  return `<svg id="ids-per-second" width="${CHART_WIDTH}" height="${CHART_HEIGHT}" viewBox="0 0 ${CHART_WIDTH} ${CHART_HEIGHT}" role="img" aria-label="IDs issued per second">
<polyline fill="none" stroke="#2b6cb0" stroke-width="2" points="${coords}"/></svg>
<p class="muted" id="chart-caption">${escapeHtml(caption)}</p>`;
}

function formatSpan(seconds: number): string {
  return seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 60)} min`;
}

function formatRate(perSecond: number): string {
  return perSecond >= 100 ? Math.round(perSecond).toLocaleString('en') : perSecond.toFixed(1);
}

function row(cells: string[], className = ''): string {
  return `<tr${className === '' ? '' : ` class="${className}"`}>${cells.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
