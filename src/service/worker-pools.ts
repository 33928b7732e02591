/**
 * Snowflake worker pools on every backend: creating them, their settings (fixed once created, so
 * cached for good), which backend owns which worker IDs, and their leases as the owners hold them.
 * Taking, renewing and releasing leases is worker-leases.ts. Every call to a backend goes through
 * the allocator's breakers.
 */
import { throwFirstFailure, type Allocator } from '../allocator/allocator.js';
import type { Clock } from '../core/clock.js';
import {
  assertPoolName,
  isFree,
  isLive,
  ownerOf,
  parsePoolSettings,
  samePool,
  workersOwnedBy,
  type PoolSettings,
} from '../core/worker-leases.js';
import { BackendsUnavailableError, PoolConflictError, PoolNotFoundError, SchemaOutdatedError } from '../core/errors.js';
import { errorText } from '../util/error-text.js';
import {
  DEFAULT_SNOWFLAKE_EPOCH_MS,
  timeField,
  type AssumedLayout,
  type TimeField,
} from '../core/snowflake-lifetime.js';

/** Pools the status page shows at most. */
const MAX_POOLS_SHOWN = 20;
/** Backends not yet known by their offset are connected at most this often. */
const PROBE_EVERY_MS = 1000;

/** Dependencies of the pools. */
export interface WorkerPoolsOptions {
  readonly allocator: Allocator;
  readonly clock?: Clock;
  /** The epoch and time bits the holders mint with (TICKETD_SNOWFLAKE_EPOCH, TICKETD_SNOWFLAKE_TIME_BITS); default: the clients' defaults. */
  readonly layout?: AssumedLayout;
}

/** A pool's owner backend: its offset, and its label once a configured backend has answered with it. */
export interface PoolOwner {
  readonly offset: bigint;
  readonly label: string | undefined;
}

/** One worker ID as the operator sees it (its owner's record). */
export interface LeaseView {
  readonly workerId: number;
  readonly owner: string;
  readonly state: 'leased' | 'cooling';
  readonly epoch: string;
  readonly holder: string;
  readonly expiresAt: string;
  readonly freeAt: string;
}

/** A pool's state on the backends that answered. */
export interface PoolState {
  readonly pool: PoolSettings;
  readonly leased: number;
  /** Expired unreleased leases inside their reuse delay. */
  readonly cooling: number;
  readonly free: number;
  readonly leases: readonly LeaseView[];
  /** Owners that did not answer: their worker IDs are not counted. */
  readonly unanswered: readonly string[];
  /** When the holders' time field runs out, for the layout ticketd assumes they use. */
  readonly timeField: TimeField;
}

/** Worker pools on every backend. */
export class WorkerPools {
  readonly #allocator: Allocator;
  readonly #clock: Clock;
  readonly #layout: AssumedLayout;
  readonly #pools = new Map<string, PoolSettings>();
  #probedAt = Number.NEGATIVE_INFINITY;

  constructor(options: WorkerPoolsOptions) {
    this.#allocator = options.allocator;
    this.#clock = options.clock ?? Date.now;
    this.#layout = options.layout ?? { epochMs: DEFAULT_SNOWFLAKE_EPOCH_MS, timeBits: undefined };
  }

  /**
   * Creates the pool on every backend. Its owners are the backends' offsets now (or, when a backend
   * already has the pool, its owners: a repeat completes what a 503 left). True when created anywhere now.
   */
  async create(name: string, body: unknown): Promise<{ pool: PoolSettings; created: boolean }> {
    // Bad input is a 400 whatever the backends' state: judged before any of them is asked.
    parsePoolSettings(name, body, []);
    const held = (await this.#allocator.onWorkerStores((s) => s.readPools(name), { includeOpen: true })).flatMap((a) =>
      a.ok ? a.value : [],
    );
    const owners =
      held[0]?.owners ??
      (await this.#allocator.fleet.stripes()).map((s) => s.offset).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const pool = parsePoolSettings(name, body, owners);
    const conflicting = held.find((h) => !samePool(h, pool));
    if (conflicting !== undefined)
      throw new PoolConflictError(
        `pool ${name} exists with other settings (workerBits ${conflicting.workerBits}, ttlMs ${conflicting.ttlMs}, maxSkewMs ${conflicting.maxSkewMs}, reuseDelayMs ${conflicting.reuseDelayMs})`,
      );
    const answers = await this.#allocator.onWorkerStores((s) => s.createPool(pool), { includeOpen: true });
    const refusal = answers.find(
      (a) => !a.ok && (a.error instanceof PoolConflictError || a.error instanceof SchemaOutdatedError),
    );
    if (refusal !== undefined && !refusal.ok) throw refusal.error;
    const failed = answers.flatMap((a) => (a.ok ? [] : [`${a.backend}: ${errorText(a.error)}`]));
    if (failed.length > 0)
      throw new BackendsUnavailableError(
        `pool ${name} was not created on ${failed.join('; ')}; repeat the request to complete it`,
      );
    this.#pools.set(name, pool);
    return { pool, created: answers.some((a) => a.ok && a.value) };
  }

  /** A pool's settings, as the backends that answer hold them. */
  async pool(name: string): Promise<PoolSettings> {
    assertPoolName(name);
    const known = this.#pools.get(name);
    if (known !== undefined) return known;
    const answers = await this.#allocator.onWorkerStores((s) => s.readPools(name));
    const found = answers.flatMap((a) => (a.ok ? a.value : []));
    const first = found[0];
    if (first === undefined) {
      const outdated = answers.find((a) => !a.ok && a.error instanceof SchemaOutdatedError);
      if (outdated !== undefined && !outdated.ok) throw outdated.error;
      if (answers.some((a) => a.ok))
        throw new PoolNotFoundError(
          `no worker pool ${name}; create it with PUT /v1/worker-pools/${name} (admin) or npx ticketd workers create ${name}`,
        );
      throw new BackendsUnavailableError(
        `no backend answered for pool ${name}: ${answers.map((a) => (a.ok ? '' : `${a.backend}: ${errorText(a.error)}`)).join('; ')}`,
      );
    }
    if (found.some((p) => !samePool(p, first)))
      throw new PoolConflictError(`backends disagree on the settings of pool ${name}`);
    this.#pools.set(name, first);
    return first;
  }

  /** Names of the pools this process has read (metrics read their leases at scrape time). */
  served(): string[] {
    return [...this.#pools.keys()];
  }

  /** Every pool any answering backend holds; when none answers, that is an error, not an empty list. */
  async list(): Promise<PoolSettings[]> {
    const answers = await this.#allocator.onWorkerStores((s) => s.readPools());
    if (!answers.some((a) => a.ok))
      throw new BackendsUnavailableError(
        `no backend answered for the worker pools: ${answers.map((a) => (a.ok ? '' : `${a.backend}: ${errorText(a.error)}`)).join('; ')}`,
      );
    const byName = new Map<string, PoolSettings>();
    for (const a of answers) if (a.ok) for (const p of a.value) if (!byName.has(p.name)) byName.set(p.name, p);
    return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The pool's leases as their owners hold them. */
  async state(name: string): Promise<PoolState> {
    const pool = await this.pool(name);
    const owners = await this.owners(pool);
    const labels = owners.flatMap((o) => (o.label === undefined ? [] : [o.label]));
    const answers = await this.#allocator.onWorkerStores((s) => s.readRecords(name), { only: labels });
    const leases: LeaseView[] = [];
    const unanswered = owners.filter((o) => o.label === undefined).map((o) => `offset ${o.offset}`);
    let counted = 0;
    for (const owner of owners) {
      const a = answers.find((x) => x.backend === owner.label);
      if (a === undefined || !a.ok) {
        if (owner.label !== undefined) unanswered.push(owner.label);
        continue;
      }
      counted += workersOwnedBy(pool, owner.offset).length;
      for (const r of a.value.records) {
        if (ownerOf(pool, r.workerId) !== owner.offset || isFree(r, a.value.now)) continue;
        leases.push({
          workerId: r.workerId,
          owner: a.backend,
          state: isLive(r, a.value.now) ? 'leased' : 'cooling',
          epoch: String(r.epoch),
          holder: r.holder,
          expiresAt: new Date(r.expiresMs).toISOString(),
          freeAt: new Date(r.freeMs).toISOString(),
        });
      }
    }
    leases.sort((a, b) => a.workerId - b.workerId);
    const leased = leases.filter((l) => l.state === 'leased').length;
    const cooling = leases.length - leased;
    const field = timeField(pool.workerBits, this.#layout, this.#clock());
    return { pool, leased, cooling, free: counted - leased - cooling, leases, unanswered, timeField: field };
  }

  /** The state of every pool (the first MAX_POOLS_SHOWN by name), skipping any that cannot be read now (the status page). */
  async states(): Promise<PoolState[]> {
    const pools = (await this.list()).slice(0, MAX_POOLS_SHOWN);
    const states = await Promise.all(pools.map((p) => this.state(p.name).catch(() => undefined)));
    return states.filter((s): s is PoolState => s !== undefined);
  }

  /**
   * After every backend was restored (`ticketd fence --apply`): holds every worker ID of every pool
   * on every backend for TTL + reuse delay, above any timestamp a holder from before may still use.
   * Needs every backend; returns the pools fenced.
   */
  async fence(): Promise<PoolSettings[]> {
    const answers = await this.#allocator.onWorkerStores((s) => s.readPools(), { includeOpen: true });
    throwFirstFailure(answers);
    const pools = [...new Map(answers.flatMap((a) => (a.ok ? a.value : [])).map((p) => [p.name, p])).values()];
    for (const pool of pools) {
      throwFirstFailure(await this.#allocator.onWorkerStores((s) => s.fencePool(pool), { includeOpen: true }));
    }
    return pools;
  }

  /**
   * The label of the backend with each owner offset (undefined while no configured backend has
   * answered with it). A backend is known by its offset once connected: one that was down when this
   * process started is connected here (at most once a second), since nothing else may have yet.
   */
  async owners(pool: PoolSettings): Promise<{ offset: bigint; label: string | undefined }[]> {
    const find = (): { offset: bigint; label: string | undefined }[] => {
      const known = this.#allocator.offsets();
      return pool.owners.map((offset) => ({ offset, label: known.find((k) => k.offset === offset)?.label }));
    };
    const owners = find();
    if (owners.every((o) => o.label !== undefined) || this.#clock() - this.#probedAt < PROBE_EVERY_MS) return owners;
    this.#probedAt = this.#clock();
    await this.#allocator.probe();
    return find();
  }

  async ownerLabel(pool: PoolSettings, workerId: number): Promise<string> {
    const offset = ownerOf(pool, workerId);
    const label = (await this.owners(pool)).find((o) => o.offset === offset)?.label;
    if (label === undefined)
      throw new BackendsUnavailableError(
        `the owner of worker ${workerId} of pool ${pool.name} (offset ${offset}) has not answered yet`,
      );
    return label;
  }

  others(owner: string): string[] {
    return this.#allocator.offsets().flatMap((k) => (k.label === owner ? [] : [k.label]));
  }
}
