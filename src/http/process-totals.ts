/**
 * The whole process's figures for the status page, read from the /metrics text: under
 * `serve --workers N` that text is every worker's, summed by the primary (cli/cluster.ts), while a
 * page built from one worker's state alternated between workers' figures from one reload to the next.
 */

/** Per sequence: IDs handed out, and IDs cached, by every worker of the process. */
export interface ProcessTotals {
  readonly issued: ReadonlyMap<string, number>;
  readonly cached: ReadonlyMap<string, number>;
}

const SAMPLE = /^(ticketd_ids_issued_total|ticketd_cached_ids)\{sequence="([a-z0-9_]+)"\} (\S+)$/;

/** The totals in a Prometheus text exposition; samples repeated per worker are added up. */
export function processTotals(metricsText: string): ProcessTotals {
  const issued = new Map<string, number>();
  const cached = new Map<string, number>();
  for (const line of metricsText.split('\n')) {
    const match = SAMPLE.exec(line);
    if (match === null) continue;
    const value = Number(match[3]);
    if (!Number.isFinite(value)) continue;
    const into = match[1] === 'ticketd_ids_issued_total' ? issued : cached;
    into.set(match[2]!, (into.get(match[2]!) ?? 0) + value);
  }
  return { issued, cached };
}
