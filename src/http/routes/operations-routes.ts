/** The operations routes: health, readiness, metrics, the OpenAPI document and the status page. */
import type { ActivityHistory } from '../../service/activity.js';
import type { TicketService } from '../../service/ticket-service.js';
import { openApiDocument } from '../openapi.js';
import type { Route } from '../router.js';
import { renderStatusPage } from '../status-page.js';

/** Where /metrics gets its text: this process's registry, or (under --workers) every worker's. */
export interface MetricsSource {
  readonly contentType: string;
  render(): Promise<string>;
}

/** What the operations routes need. */
export interface OperationsRoutesOptions {
  readonly service: TicketService;
  readonly metrics: MetricsSource;
  readonly activity: ActivityHistory | undefined;
  readonly version: string;
  readonly startedAt: number | undefined;
  readonly clock: () => number;
}

/** Adds the operations routes. */
export function addOperationsRoutes(route: Route, options: OperationsRoutesOptions): void {
  const { service, metrics, clock } = options;
  route('/healthz', { get: (_req, res) => void res.json({ status: 'ok' }) });
  route('/readyz', {
    get: (_req, res) => {
      res.set('Cache-Control', 'no-store');
      const sequences = Object.fromEntries(service.servedSequences().map((name) => [name, service.capacityStatus(name) ?? null]));
      res.status(service.ready ? 200 : 503).json({ ready: service.ready, backends: service.backendStatus(), sequences });
    },
  });
  route('/metrics', {
    get: async (_req, res) => {
      const text = await metrics.render();
      res.set('Cache-Control', 'no-store').type(metrics.contentType).send(text);
    },
  });
  route('/openapi.json', { get: (_req, res) => void res.json(openApiDocument) });
  route('/', {
    get: (_req, res) => {
      const now = clock();
      const info = { version: options.version, startedAt: options.startedAt ?? now, now };
      res.set('Cache-Control', 'no-store').type('html').send(renderStatusPage(service, options.activity?.points() ?? [], info));
    },
  });
}
