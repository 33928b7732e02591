/** The operations routes: health, readiness, metrics, the OpenAPI document and the status page. */
import type { ActivityHistory } from '../../service/activity.js';
import type { TicketService } from '../../service/ticket-service.js';
import type { WorkerPools } from '../../service/worker-pools.js';
import { openApiDocument } from '../openapi.js';
import type { Route } from '../router.js';
import { processTotals } from '../process-totals.js';
import type { FleetUsage } from '../../core/fleet-usage.js';
import { renderStatusPage } from '../status-page.js';
import { strangerBackend } from '../backend-names.js';
import { countedFor, redactMetrics, type AdminCheck } from '../visibility.js';

/** Where /metrics gets its text: this process's registry, or (under --workers) every worker's. */
export interface MetricsSource {
  readonly contentType: string;
  render(): Promise<string>;
}

/** What the operations routes need. */
export interface OperationsRoutesOptions {
  readonly service: TicketService;
  /** Worker pools, shown on the status page when there are any. */
  readonly workers?: WorkerPools | undefined;
  /** Whether a request bears the admin token: only then are an opaque sequence's counts shown (visibility.ts). */
  readonly isAdmin: AdminCheck;
  readonly metrics: MetricsSource;
  readonly activity: ActivityHistory | undefined;
  readonly version: string;
  readonly startedAt: number | undefined;
  readonly runsOutWarningSeconds?: number | undefined;
  readonly clock: () => number;
}

/** Adds the operations routes. */
export function addOperationsRoutes(route: Route, options: OperationsRoutesOptions): void {
  const { service, metrics, clock, isAdmin } = options;
  route('/healthz', { get: (_req, res) => void res.json({ status: 'ok' }) });
  route('/readyz', {
    get: (req, res) => {
      res.set('Cache-Control', 'no-store');
      const admin = isAdmin(req);
      const counted = countedFor(service, admin);
      const sequences = Object.fromEntries(
        service.servedSequences().map((name) => [name, counted(name) ? (service.capacityStatus(name) ?? null) : null]),
      );
      const backends = service.backendStatus(counted);
      res.status(service.ready ? 200 : 503).json({
        ready: service.ready,
        backends: admin ? backends : backends.map(strangerBackend),
        sequences,
      });
    },
  });
  route('/metrics', {
    get: async (req, res) => {
      const text = await metrics.render();
      const shown = isAdmin(req) ? text : await redactMetrics(text, (name) => service.idsOf(name));
      res.set('Cache-Control', 'no-store').type(metrics.contentType).send(shown);
    },
  });
  route('/openapi.json', { get: (_req, res) => void res.json(openApiDocument) });
  route('/', {
    get: async (_req, res) => {
      const pools = (await options.workers?.states().catch(() => [])) ?? [];
      const now = clock();
      // The figures of the whole process, as /metrics has them (every worker's under --workers); without them, this worker's.
      const totals = await metrics.render().then(processTotals, () => undefined);
      const usage = await shownUsage(service);
      const info = {
        version: options.version,
        startedAt: options.startedAt ?? now,
        now,
        ...(options.runsOutWarningSeconds !== undefined && { runsOutWarningSeconds: options.runsOutWarningSeconds }),
        ...(totals === undefined ? {} : { totals }),
        ...(usage === undefined ? {} : { usage }),
      };
      res
        .set('Cache-Control', 'no-store')
        .type('html')
        .send(renderStatusPage(service, options.activity?.points() ?? [], info, pools));
    },
  });
}

/** The fleet's usage figures of ordered and strict sequences only: the page is open to all (visibility.ts). */
async function shownUsage(service: TicketService): Promise<FleetUsage[] | undefined> {
  const read = await service.fleetUsage({ cached: true }).catch(() => undefined);
  if (read === undefined) return undefined;
  const modes = await Promise.all(read.sequences.map((s) => service.idsOf(s.sequence).catch(() => undefined)));
  return read.sequences.filter((_s, i) => modes[i] === 'ordered' || modes[i] === 'strict');
}
