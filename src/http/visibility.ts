/**
 * What a request may see of a sequence's volume and order (docs/opaque-ids.md, "In use"). The admin
 * sees everything. Anyone else sees an ordered sequence as before, and of an opaque one only its
 * settings and state: no ticket, ordered ID, frontier, issued or cached count, or rate, on any
 * route. An opaque sequence exists to hide those; its IDs alone would be no use if ticketd's own
 * routes told them.
 */
import type { Request } from 'express';
import type { BackendSequenceStatus } from '../allocator/allocator.js';
import type { IdMode } from '../core/sequence.js';
import type { TicketService } from '../service/ticket-service.js';

/** True for a sequence whose counts this request may see. */
export type Counted = (sequence: string) => boolean;

/** Says whether a request bears the admin token (without refusing one that does not). */
export type AdminCheck = (req: Request) => boolean;

/** Every sequence for the admin; for anyone else, the ordered and strict ones this process has loaded (unknown ones stay hidden). */
export function countedFor(service: TicketService, admin: boolean): Counted {
  return admin
    ? () => true
    : (name) => {
        const ids = service.servedSettings(name)?.ids;
        return ids === 'ordered' || ids === 'strict';
      };
}

/** A backend's state for an opaque sequence, without its last ticket or a quarantine's reason (which names tickets). */
export function withoutTickets(status: BackendSequenceStatus): BackendSequenceStatus {
  return {
    ...status,
    lastTicket: null,
    quarantined: status.quarantined === null ? null : 'quarantined (the reason is shown with the admin token)',
  };
}

/**
 * The lines of ticketd_backend_info (metrics/scraped-series.ts), whose labels say where each backend
 * is: for the admin only. Every other series names a backend by its name, whoever scrapes.
 */
const ADMIN_ONLY_SERIES = /^(?:# (?:HELP|TYPE) )?ticketd_backend_info[{ ]/;

/** Matches a sample's sequence label; names match ^[a-z][a-z0-9_]*$, so the quoted value is exact. */
const SEQUENCE_LABEL = /[{,]sequence="([a-z0-9_]+)"/;

/**
 * The /metrics text without ticketd_backend_info, and without the samples of sequences that are not
 * ordered, or whose mode is not known (fail closed). `idsOf` tells a sequence's mode, also one another worker served.
 */
export async function redactMetrics(
  text: string,
  idsOf: (name: string) => Promise<IdMode | undefined>,
): Promise<string> {
  const lines = text
    .split('\n')
    .filter((line) => !ADMIN_ONLY_SERIES.test(line))
    .map((line) => ({ line, name: SEQUENCE_LABEL.exec(line)?.[1] }));
  const shown = new Set<string>();
  await Promise.all(
    [...new Set(lines.flatMap((l) => l.name ?? []))].map(async (name) => {
      const mode = await idsOf(name).catch(() => undefined);
      if (mode === 'ordered' || mode === 'strict') shown.add(name);
    }),
  );
  return lines
    .filter((l) => l.name === undefined || shown.has(l.name))
    .map((l) => l.line)
    .join('\n');
}
