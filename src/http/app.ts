/** The HTTP API: routes of the public contract, mapped onto the ticket service. */
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { pinoHttp } from 'pino-http';
import { DEFAULT_MAX_COUNT } from '../config.js';
import { BadRequestError, MethodNotAllowedError, RouteNotFoundError, TicketdError } from '../errors.js';
import { PERMUTATION_SCHEME } from 'ticketd-client';
import { parseSequenceSettings, parseUnsigned, settingsToJson } from '../core/sequence.js';
import type { ActivityHistory } from '../service/activity.js';
import type { TicketService } from '../service/ticket-service.js';
import type { Logger } from '../logger.js';
import { requireAdmin } from './admin-auth.js';
import { ownTokenCheck, requireClientToken } from './client-auth.js';
import { firstId, idsAsJsonList, idsAsLines } from './format-ids.js';
import { sendProblem } from './problem.js';
import { openApiDocument } from './openapi.js';
import { rateLimit } from './rate-limit.js';
import { renderStatusPage } from './status-page.js';

/** Largest request body accepted (PUT bodies are three small fields). */
export const BODY_LIMIT_BYTES = 16 * 1024;

/** Where /metrics gets its text: this process's registry, or (under --workers) every worker's. */
export interface MetricsSource {
  readonly contentType: string;
  render(): Promise<string>;
}

/** Dependencies of the HTTP app. */
export interface AppOptions {
  readonly service: TicketService;
  readonly logger: Logger;
  readonly metrics: MetricsSource;
  readonly adminToken: string | undefined;
  /** Per sequence (or `*`), the tokens that may issue IDs; empty: issuing is open. */
  readonly clientTokens?: ReadonlyMap<string, readonly string[]>;
  /** Requests per second per token (or address) on the issuing routes; undefined: no limit. */
  readonly rateLimitPerSecond?: number | undefined;
  readonly maxCount?: number;
  /** IDs per second over the last minutes, for the status page chart. */
  readonly activity?: ActivityHistory;
  /** Shown on the status page. */
  readonly version?: string;
  /** When this process started (the status page shows its uptime). */
  readonly startedAt?: number;
  readonly clock?: () => number;
}

type Handler = (req: Request, res: Response) => Promise<void> | void;
/** A route's handler with what must run before it: guards, and a JSON body parser for admin bodies. */
interface Spec {
  readonly handler: Handler;
  readonly guards?: readonly RequestHandler[];
  readonly jsonBody?: boolean;
}

/** Builds the Express app. It holds no state of its own beyond what the service holds. */
export function createApp(options: AppOptions): Express {
  const { service, logger } = options;
  const maxCount = options.maxCount ?? DEFAULT_MAX_COUNT;
  const clock = options.clock ?? Date.now;
  const admin = requireAdmin(options.adminToken);
  const ownToken = ownTokenCheck(options.clientTokens ?? new Map());
  const issuing = [
    ...(options.clientTokens !== undefined && options.clientTokens.size > 0 ? [requireClientToken(options.clientTokens)] : []),
    ...(options.rateLimitPerSecond !== undefined ? [rateLimit(options.rateLimitPerSecond)] : []),
  ];
  const app = express();
  app.disable('x-powered-by');
  // ETags over large ID lists cost a hash per response and IDs are never repeated anyway.
  app.set('etag', false);
  // A log line per request costs a child logger and listeners on the hot path: at debug level only.
  if (logger.isLevelEnabled('debug')) {
    app.use(pinoHttp({ logger, customLogLevel: (_req, res, error) => (error !== undefined || res.statusCode >= 500 ? 'error' : 'debug') }));
  }

  const route = (path: string, specs: Record<string, Handler | Spec>): void => {
    const allowed = Object.keys(specs).map((m) => m.toUpperCase());
    for (const [method, given] of Object.entries(specs)) {
      const spec: Spec = typeof given === 'function' ? { handler: given } : given;
      const wrapped = (req: Request, res: Response, next: NextFunction): void => {
        Promise.resolve(spec.handler(req, res)).catch(next);
      };
      const body = spec.jsonBody === true ? [express.json({ limit: BODY_LIMIT_BYTES, strict: true, type: () => true })] : [];
      app[method as 'get' | 'post' | 'put'](path, ...(spec.guards ?? []), ...body, wrapped);
    }
    app.all(path, (req, res) => {
      res.set('Allow', allowed.join(', '));
      sendProblem(res, new MethodNotAllowedError(`${req.method} is not allowed on ${req.path}; allowed: ${allowed.join(', ')}`));
    });
  };

  route('/v1/sequences/:name/ids', {
    post: {
      guards: issuing,
      handler: async (req, res) => {
        const name = req.params.name as string;
        const count = parseCount(req.query.count, maxCount);
        const ids = service.tryIssue(name, count) ?? (await service.issue(name, count));
        res.set('Cache-Control', 'no-store');
        // Content negotiation only when text/plain is mentioned at all: it is costly on the hot path.
        if (req.headers.accept?.includes('text/plain') && req.accepts(['application/json', 'text/plain']) === 'text/plain') {
          res.type('text/plain').send(idsAsLines(ids));
        } else {
          res.type('application/json').send(`{"sequence":"${name}","ids":[${idsAsJsonList(ids)}]}`);
        }
      },
    },
  });

  route('/v1/sequences/:name/next', {
    get: {
      guards: issuing,
      handler: async (req, res) => {
        const name = req.params.name as string;
        const ids = service.tryIssue(name, 1) ?? (await service.issue(name, 1));
        res.set('Cache-Control', 'no-store');
        res.type('application/json').send(`{"sequence":"${name}","id":"${firstId(ids)}"}`);
      },
    },
  });

  route('/v1/sequences/:name/blocks', {
    post: {
      guards: issuing,
      handler: async (req, res) => {
        const name = req.params.name as string;
        const { ids } = await service.settings(name);
        // An ordered block of an opaque sequence shows its order: only a trusted client gets one.
        if (ids === 'opaque') ownToken(req, name, 'blocks');
        const block = await service.leaseBlock(name);
        res.set('Cache-Control', 'no-store');
        res.type('application/json').send(`{"sequence":"${name}","first":"${block.first}","last":"${block.last}","ids":"${ids}"}`);
      },
    },
  });

  route('/v1/sequences/:name/id-key', {
    get: {
      guards: issuing,
      handler: async (req, res) => {
        const name = req.params.name as string;
        const settings = await service.settings(name);
        if (settings.key === undefined) throw new BadRequestError(`sequence ${name} has ordered IDs: there is no key`);
        ownToken(req, name, 'the key');
        res.set('Cache-Control', 'no-store');
        res.json({ sequence: name, ids: settings.ids, scheme: PERMUTATION_SCHEME, startAfter: String(settings.startAfter), maxId: String(settings.maxId), key: Buffer.from(settings.key).toString('base64url') });
      },
    },
  });

  route('/v1/sequences/:name/ids/:id', {
    get: {
      guards: [admin],
      handler: async (req, res) => {
        const name = req.params.name as string;
        const decoded = await service.decode(name, parseId(req.params.id));
        res.json({
          sequence: name,
          id: String(decoded.id),
          ids: decoded.ids,
          ordered: String(decoded.ordered),
          ticket: String(decoded.ticket),
          backend: decoded.backend ?? null,
        });
      },
    },
  });

  route('/v1/sequences/:name/release', {
    post: {
      guards: [admin],
      jsonBody: true,
      handler: async (req, res) => {
        const body = req.body as { backend?: unknown } | undefined;
        if (typeof body?.backend !== 'string' || body.backend === '') {
          throw new BadRequestError('body must be a JSON object with backend: the backend as GET /v1/sequences/{name} names it (mysql://host:port/db)');
        }
        res.json(await service.release(req.params.name as string, body.backend));
      },
    },
  });

  route('/v1/sequences/:name', {
    get: async (req, res) => {
      const name = req.params.name as string;
      const settings = await service.settings(name);
      res.json({
        ...settingsToJson(settings),
        cache: service.cacheStatus(name) ?? null,
        capacity: service.capacityStatus(name) ?? null,
        backends: service.backendsFor(name),
      });
    },
    put: {
      guards: [admin],
      jsonBody: true,
      handler: async (req, res) => {
        const settings = parseSequenceSettings(req.params.name as string, req.body);
        const created = await service.createSequence(settings);
        res.status(created ? 201 : 200).json(settingsToJson(settings));
      },
    },
  });

  route('/v1/sequences', {
    get: async (_req, res) => {
      const list = await service.listSequences();
      res.json({ sequences: list.sequences.map((s) => ({ ...settingsToJson(s.settings), backends: s.backends })), unanswered: list.unanswered });
    },
  });

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
      const text = await options.metrics.render();
      res.set('Cache-Control', 'no-store').type(options.metrics.contentType).send(text);
    },
  });
  route('/openapi.json', { get: (_req, res) => void res.json(openApiDocument) });
  route('/', {
    get: (_req, res) => {
      const now = clock();
      const info = { version: options.version ?? '', startedAt: options.startedAt ?? now, now };
      res.set('Cache-Control', 'no-store').type('html').send(renderStatusPage(service, options.activity?.points() ?? [], info));
    },
  });

  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(new RouteNotFoundError(`no route for ${req.method} ${req.path}`));
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (!(error instanceof TicketdError) && !isClientError(error)) {
      logger.error({ method: req.method, path: req.path, err: error instanceof Error ? error.stack : String(error) }, 'request failed');
    }
    sendProblem(res, error);
  });
  return app;
}

function parseCount(value: unknown, maxCount: number): number {
  if (value === undefined) return 1;
  if (typeof value !== 'string' || !/^[0-9]{1,9}$/.test(value)) {
    throw new BadRequestError(`count must be an integer from 1 to ${maxCount}; got ${JSON.stringify(value)?.slice(0, 40)}`);
  }
  const count = Number(value);
  if (count < 1 || count > maxCount) throw new BadRequestError(`count must be an integer from 1 to ${maxCount}; got ${count}`);
  return count;
}

function parseId(value: unknown): bigint {
  if (typeof value !== 'string' || !/^[0-9]{1,20}$/.test(value)) {
    throw new BadRequestError(`id must be a decimal integer from 1 to 18446744073709551615; got ${JSON.stringify(value)?.slice(0, 40)}`);
  }
  return parseUnsigned(value, 'id');
}

function isClientError(error: unknown): boolean {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
}
