/** The status page at `/`: backends and sequences as this process sees them. Refreshes itself. */
import type { TicketService } from '../service/ticket-service.js';

/** Renders the page; every value shown is escaped. */
export function renderStatusPage(service: TicketService): string {
  const backends = service
    .backendStatus()
    .map((b) => row([b.backend, b.state, b.stripe ? `${b.stripe.offset} mod ${b.stripe.increment}` : '?', b.lastError ?? '']))
    .join('');
  const sequences = service
    .servedSequences()
    .map((name) => {
      const c = service.cacheStatus(name);
      const capacity = service.capacityStatus(name);
      return row([
        name,
        String(c?.issued ?? 0),
        String(c?.available ?? 0),
        capacity === undefined ? '' : `${capacity.usedPercent}%`,
        capacity?.projectedExhaustionAt ?? '',
        capacity?.level ?? (c?.exhausted ? 'exhausted' : 'ok'),
      ]);
    })
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="2"><title>ticketd</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}</style>
</head><body><h1>ticketd</h1><p>${service.ready ? 'ready' : 'NOT READY'}</p>
<h2>Backends</h2><table><tr><th>backend</th><th>state</th><th>tickets</th><th>last error</th></tr>${backends}</table>
<h2>Sequences served by this process</h2><table><tr><th>sequence</th><th>issued</th><th>cached</th><th>maxId used</th><th>runs out</th><th>state</th></tr>${sequences}</table>
</body></html>
`;
}

function row(cells: string[]): string {
  return `<tr>${cells.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
