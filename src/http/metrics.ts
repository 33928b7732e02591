/** Prometheus text exposition of ticketd's own series (`ticketd_*`). */
import type { TicketService } from '../service/ticket-service.js';

/** Renders the current metrics. */
export function renderMetrics(service: TicketService): string {
  const lines: string[] = [];
  const family = (name: string, type: string, help: string): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  };
  const sequences = service.servedSequences();
  family('ticketd_ids_issued_total', 'counter', 'IDs handed out by this process, per sequence.');
  for (const name of sequences) lines.push(`ticketd_ids_issued_total{sequence="${name}"} ${service.cacheStatus(name)?.issued ?? 0}`);
  family('ticketd_cached_ids', 'gauge', 'IDs cached in this process and not yet handed out, per sequence.');
  for (const name of sequences) lines.push(`ticketd_cached_ids{sequence="${name}"} ${service.cacheStatus(name)?.available ?? 0}`);
  family('ticketd_sequence_max_id_used_ratio', 'gauge', 'Highest ID fetched by this process divided by the sequence maxId.');
  for (const name of sequences) {
    const capacity = service.capacityStatus(name);
    if (capacity !== undefined) lines.push(`ticketd_sequence_max_id_used_ratio{sequence="${name}"} ${capacity.usedPercent / 100}`);
  }
  family('ticketd_backend_up', 'gauge', '1 when the backend answered its last call, 0 when it failed, -1 before any call.');
  for (const b of service.backendStatus()) {
    const value = b.state === 'up' ? 1 : b.state === 'down' ? 0 : -1;
    lines.push(`ticketd_backend_up{backend="${b.backend}"} ${value}`);
  }
  family('ticketd_ready', 'gauge', '1 when an ID can be issued now.');
  lines.push(`ticketd_ready ${service.ready ? 1 : 0}`);
  return lines.join('\n') + '\n';
}
