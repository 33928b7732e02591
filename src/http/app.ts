/** The HTTP API: routes of the public contract, mapped onto the ticket service. */
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { pinoHttp } from 'pino-http';
import { DEFAULT_MAX_COUNT } from '../config/load-config.js';
import { RouteNotFoundError } from '../core/errors.js';
import type { Logger } from '../logger.js';
import type { ActivityHistory } from '../service/activity.js';
import type { TicketService } from '../service/ticket-service.js';
import { adminCheck, requireAdmin } from './admin-auth.js';
import { createAudit } from './audit.js';
import { ownTokenCheck } from './client-auth.js';
import type { Credentials } from './credentials.js';
import { namesOf, problemView } from './backend-names.js';
import { issuingGuards, type IssuingGuards } from './issuing-guards.js';
import { identify, identifyCallers, type CountCaller } from './request-caller.js';
import { isExpectedError, logUnexpected, sendProblem } from './problem.js';
import { router } from './router.js';
import { addIssuingRoutes } from './routes/issuing-routes.js';
import { addOperationsRoutes, type MetricsSource } from './routes/operations-routes.js';
import { addSequenceRoutes } from './routes/sequence-routes.js';
import { addWorkerRoutes } from './routes/worker-routes.js';
import type { Workers } from '../service/worker-leases.js';

export { BODY_LIMIT_BYTES } from './router.js';
export type { MetricsSource } from './routes/operations-routes.js';

/** Dependencies of the HTTP app. */
export interface AppOptions {
  readonly service: TicketService;
  /** Snowflake worker pools and their leases; without them the pool routes answer 404. */
  readonly workers?: Workers;
  readonly logger: Logger;
  readonly metrics: MetricsSource;
  /** The admin and client tokens in force (a reload swaps them). */
  readonly credentials: Credentials;
  /** Requests per second per token (or address) on the issuing routes; undefined: no limit. */
  readonly rateLimitPerSecond?: number | undefined;
  readonly maxCount?: number;
  /** Counts every request by its caller's token name (metrics.ts, `called`); without it nothing is counted. */
  readonly countCaller?: CountCaller | undefined;
  /** Counts every answer (metrics.ts, `answered`); without it nothing is counted. */
  readonly observe?: (route: string, method: string, status: number, seconds: number) => void;
  /** IDs per second over the last minutes, for the status page chart. */
  readonly activity?: ActivityHistory;
  /** Shown on the status page. */
  readonly version?: string;
  /** When this process started (the status page shows its uptime). */
  readonly startedAt?: number;
  /** The status page marks a sequence with less time left than this (TICKETD_RUNS_OUT_WARNING_DAYS). */
  readonly runsOutWarningSeconds?: number;
  readonly clock?: () => number;
  /** The issuing routes' guards when something else shares them (the fast path); default: the app's own. */
  readonly issuingGuards?: IssuingGuards;
}

/** Builds the Express app. It holds no state of its own beyond what the service holds. */
export function createApp(options: AppOptions): Express {
  const { service, logger, credentials } = options;
  const app = express();
  app.disable('x-powered-by');
  // ETags over large ID lists cost a hash per response and IDs are never repeated anyway.
  app.set('etag', false);
  // A log line per request costs a child logger and listeners on the hot path: at debug level only.
  if (logger.isLevelEnabled('debug')) {
    app.use(
      pinoHttp({
        logger,
        customLogLevel: (_req, res, error) => (error !== undefined || res.statusCode >= 500 ? 'error' : 'debug'),
      }),
    );
  }
  // Who is calling, read once for every route from here on (request-caller.ts).
  app.use(identifyCallers(credentials, options.countCaller));
  const audit = createAudit(logger);
  const { observe } = options;
  if (observe !== undefined) {
    app.use((req, res, next) => {
      const started = performance.now();
      // req.route is the route as declared (`/v1/sequences/:name/ids`): one series per route, not per name.
      res.once('finish', () =>
        observe(
          (req.route as { path?: string } | undefined)?.path ?? 'unmatched',
          req.method,
          res.statusCode,
          (performance.now() - started) / 1000,
        ),
      );
      next();
    });
  }
  const route = router(app);
  const guards = (options.issuingGuards ?? issuingGuards(credentials, options.rateLimitPerSecond)).middleware;
  addIssuingRoutes(route, {
    service,
    maxCount: options.maxCount ?? DEFAULT_MAX_COUNT,
    guards,
    ownToken: ownTokenCheck(credentials),
  });
  const isAdmin = adminCheck();
  const shownTo = problemView(service);
  const admin = requireAdmin(credentials, audit);
  addSequenceRoutes(route, service, admin, isAdmin);
  addWorkerRoutes(route, {
    workers: options.workers,
    admin,
    isAdmin,
    guards,
    scrub: (text) => namesOf(service).scrub(text),
  });
  addOperationsRoutes(route, {
    service,
    workers: options.workers?.pools,
    isAdmin,
    metrics: options.metrics,
    activity: options.activity,
    version: options.version ?? '',
    startedAt: options.startedAt,
    runsOutWarningSeconds: options.runsOutWarningSeconds,
    clock: options.clock ?? Date.now,
  });
  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(new RouteNotFoundError(`no route for ${req.method} ${req.path}`));
  });
  // Express knows an error handler by its four parameters, the last unused.
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (!isExpectedError(error)) logUnexpected(logger, req.method, req.path, error);
    const caller = identify(req, credentials);
    audit.refused(caller, `${req.method} ${routeOf(req)}`, targetOf(req.path), error);
    // Backends by letter and no error text, unless the admin token is borne (design.md, "Listeners").
    sendProblem(res, error, shownTo(caller));
  });
  return app;
}

/** The route as declared (`/v1/sequences/:name`), or the path when none matched. */
function routeOf(req: Request): string {
  return (req.route as { path?: string } | undefined)?.path ?? req.path;
}

/** The sequence or worker pool a path names, for the audit log; the path itself otherwise. */
function targetOf(path: string): string {
  return /^\/v1\/(?:sequences|worker-pools)\/([^/]+)/.exec(path)?.[1] ?? path;
}
