/** A worker-ID lease from ticketd's pools: take, renew and release over HTTP (README, "Snowflake worker IDs"). */
import type { TlsMaterial } from './requests.js';
import { LeaseFailedError } from './errors.js';
import { askInTurn, getJson, requestInit, type Attempt } from './requests.js';

/** A lease as ticketd answers it. */
export interface LeaseAnswer {
  readonly pool: string;
  readonly workerId: number;
  readonly epoch: string;
  readonly holder: string;
  readonly expiresAt: string;
  /** How long the lease runs from when the server granted or renewed it, by the server's clock. */
  readonly expiresInMs: number;
  /** The server's clock when it answered, in Unix milliseconds. */
  readonly serverTimeMs: number;
  /** Every earlier holder of the worker ID used only timestamps at or below this one. */
  readonly highWaterMs: number;
  readonly workerBits: number;
  readonly ttlMs: number;
  readonly maxSkewMs: number;
}

/** Where and how a generator talks to ticketd. */
export interface LeaseTarget extends TlsMaterial {
  readonly urls: readonly string[];
  readonly pool: string;
  readonly token?: string | undefined;
  readonly timeoutMs?: number | undefined;
}

/** The URL that answered last: the next call starts there. */
export class LeaseRequests {
  readonly #target: LeaseTarget;
  #preferred = 0;

  constructor(target: LeaseTarget) {
    this.#target = target;
  }

  /** Takes a free worker ID of the pool. */
  take(holder: string): Promise<LeaseAnswer> {
    return this.#post('leases', { holder }, `no ticketd leased a worker ID of pool ${this.#target.pool}`);
  }

  /** Extends the lease; reports the skew measured at the last renewal. */
  renew(workerId: number, epoch: string, skewMs: number | undefined): Promise<LeaseAnswer> {
    return this.#post(
      `leases/${workerId}/renew`,
      { epoch, ...(skewMs !== undefined && { skewMs }) },
      `no ticketd renewed worker ${workerId} of pool ${this.#target.pool}`,
    );
  }

  /** Ends the lease: nothing at or after lastUsedMs + 1 was issued on it. */
  async release(workerId: number, epoch: string, lastUsedMs: number): Promise<void> {
    await this.#post(
      `leases/${workerId}/release`,
      { epoch, lastUsedMs },
      `no ticketd released worker ${workerId} of pool ${this.#target.pool}`,
    );
  }

  async #post<T>(path: string, body: object, failure: string): Promise<T> {
    const { urls, pool } = this.#target;
    const { value, index } = await askInTurn(urls, this.#preferred, failure, (url): Promise<Attempt<T>> => {
      const init = requestInit(this.#target, 'POST');
      return getJson<T>(`${url}/v1/worker-pools/${encodeURIComponent(pool)}/${path}`, {
        ...init,
        headers: { ...(init.headers as Record<string, string>), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    });
    this.#preferred = index;
    return value;
  }
}

/** True when ticketd answered that the lease is gone (TICKETD_LEASE_LOST), not that it was out of reach. */
export function leaseIsLost(error: unknown): boolean {
  return error instanceof LeaseFailedError && error.codes.includes('TICKETD_LEASE_LOST');
}
