/** The worker-pool routes: pools (admin creates), and leases of Snowflake worker IDs (clients take, renew, release). */
import type { Request, RequestHandler } from 'express';
import type { AdminGuard } from '../admin-auth.js';
import { poolToJson, type Lease, type PoolSettings } from '../../core/worker-leases.js';
import { BadRequestError, RouteNotFoundError } from '../../core/errors.js';
import type { WorkerLeases, Workers } from '../../service/worker-leases.js';
import type { WorkerPools } from '../../service/worker-pools.js';
import type { Route } from '../router.js';
import type { AdminCheck } from '../visibility.js';
import { shown } from '../../util/error-text.js';

/** Longest holder name kept (a pod name, host:pid). */
export const MAX_HOLDER_LENGTH = 128;

/** What the worker-pool routes need. */
export interface WorkerRoutesOptions {
  /** Undefined: this app serves no pools (the routes answer 404). */
  readonly workers: Workers | undefined;
  readonly admin: AdminGuard;
  readonly isAdmin: AdminCheck;
  /** Client tokens (by pool name, as for sequences) and rate limits. */
  readonly guards: readonly RequestHandler[];
  /** Names backends by letter in text a client without the admin token reads (backend-names.ts). */
  readonly scrub?: (text: string) => string;
}

/** Adds the worker-pool routes. */
export function addWorkerRoutes(route: Route, options: WorkerRoutesOptions): void {
  const { admin, isAdmin, guards } = options;
  const workers = (): Workers => {
    if (options.workers === undefined) throw new RouteNotFoundError('this ticketd serves no worker pools');
    return options.workers;
  };
  const pools = (): WorkerPools => workers().pools;
  const leases = (): WorkerLeases => workers().leases;
  route('/v1/worker-pools', {
    get: async (_req, res) => {
      res.json({ pools: (await pools().list()).map(poolToJson) });
    },
  });

  route('/v1/worker-pools/:name', {
    get: async (req, res) => {
      const state = await pools().state(req.params.name as string);
      // Who holds which worker ID (pod names, hosts) is the admin's to see; the counts are everyone's.
      const detail = isAdmin(req);
      const unanswered = detail ? state.unanswered : state.unanswered.map(options.scrub ?? ((owner) => owner));
      res.json({
        ...poolToJson(state.pool),
        leased: state.leased,
        cooling: state.cooling,
        free: state.free,
        unanswered,
        leases: detail ? state.leases : null,
        redacted: !detail,
        timeField: {
          timeBits: state.timeField.timeBits,
          epoch: new Date(state.timeField.epochMs).toISOString(),
          endsAt: new Date(state.timeField.endsMs).toISOString(),
          secondsLeft: state.timeField.secondsLeft,
        },
      });
    },
    put: {
      guards: [admin('create-worker-pool')],
      jsonBody: true,
      handler: async (req, res) => {
        const { pool, created } = await pools().create(req.params.name as string, req.body);
        res.status(created ? 201 : 200).json(poolToJson(pool));
      },
    },
  });

  route('/v1/worker-pools/:name/leases', {
    post: {
      guards,
      jsonBody: true,
      handler: async (req, res) => {
        const name = req.params.name as string;
        const lease = await leases().take(name, holderOf(req));
        res.set('Cache-Control', 'no-store').json(leaseToJson(lease, await pools().pool(name)));
      },
    },
  });

  route('/v1/worker-pools/:name/leases/:worker/renew', {
    post: {
      guards,
      jsonBody: true,
      handler: async (req, res) => {
        const name = req.params.name as string;
        const body = objectBody(req);
        const skew = body.skewMs;
        if (skew !== undefined && (typeof skew !== 'number' || !Number.isFinite(skew)))
          throw new BadRequestError(`skewMs must be a number of milliseconds; got ${JSON.stringify(skew)}`);
        const lease = await leases().renew(name, workerOf(req), epochOf(body), skew);
        res.set('Cache-Control', 'no-store').json(leaseToJson(lease, await pools().pool(name)));
      },
    },
  });

  route('/v1/worker-pools/:name/leases/:worker/release', {
    post: {
      guards,
      jsonBody: true,
      handler: async (req, res) => {
        const body = objectBody(req);
        const last = body.lastUsedMs;
        if (typeof last !== 'number' || !Number.isInteger(last) || last < 0) {
          throw new BadRequestError(
            `lastUsedMs must be the last millisecond (Unix time) the holder used in an ID, or 0 when it used none; got ${JSON.stringify(last)}`,
          );
        }
        await leases().release(req.params.name as string, workerOf(req), epochOf(body), last);
        res.json({ released: true });
      },
    },
  });
}

/** A lease as JSON: the epoch as a decimal string, times as Unix milliseconds by the owner's clock. */
function leaseToJson(lease: Lease, pool: PoolSettings): Record<string, unknown> {
  return {
    pool: lease.pool,
    workerId: lease.workerId,
    epoch: String(lease.epoch),
    holder: lease.holder,
    expiresAt: new Date(lease.expiresMs).toISOString(),
    expiresInMs: lease.expiresMs - lease.grantedMs,
    serverTimeMs: lease.serverMs,
    highWaterMs: lease.highWaterMs,
    workerBits: pool.workerBits,
    ttlMs: pool.ttlMs,
    maxSkewMs: pool.maxSkewMs,
  };
}

function objectBody(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new BadRequestError('body must be a JSON object such as {"epoch":"1733270400000000"}');
  return body as Record<string, unknown>;
}

function holderOf(req: Request): string {
  const body: unknown = req.body;
  const given = typeof body === 'object' && body !== null ? (body as { holder?: unknown }).holder : undefined;
  if (given === undefined) return (req.ip ?? 'unknown').slice(0, MAX_HOLDER_LENGTH);
  if (typeof given !== 'string' || given === '' || given.length > MAX_HOLDER_LENGTH || hasControlCharacter(given)) {
    throw new BadRequestError(
      `holder must be a name of 1 to ${MAX_HOLDER_LENGTH} printable characters (a pod name, host:pid); got ${shown(given, 60)}`,
    );
  }
  return given;
}

/** The widest pool (16 worker bits) has worker IDs 0 to 65535; the document says so. */
const MAX_WORKER_ID = 65535;

function workerOf(req: Request): number {
  const text = req.params.worker as string;
  if (!/^[0-9]{1,5}$/.test(text) || Number(text) > MAX_WORKER_ID)
    throw new BadRequestError(`worker must be a worker ID from 0 to 65535; got ${JSON.stringify(text.slice(0, 20))}`);
  return Number(text);
}

function epochOf(body: Record<string, unknown>): bigint {
  const e = body.epoch;
  if (typeof e !== 'string' || !/^[1-9][0-9]{0,19}$/.test(e) || BigInt(e) > 0xffff_ffff_ffff_ffffn) {
    throw new BadRequestError(`epoch must be the lease's epoch as a decimal string; got ${shown(e, 40)}`);
  }
  return BigInt(e);
}

/** Whether the text holds a control character (U+0000 to U+001F): a holder name must print on one line. */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 0x20) return true;
  return false;
}
