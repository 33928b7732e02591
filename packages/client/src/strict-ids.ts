/**
 * A strict sequence's IDs, asked for from ticketd each time (docs/strict-sequences.md): no block is
 * ever buffered, since IDs served from a client's own block would leave real-time order.
 *
 * Calls made while a request is in flight wait for the next one, which asks for all of them at once
 * (coalesced). They never join the request in flight: it was sent before they were made, and an
 * answer given elsewhere since may hold greater IDs than its own.
 */
import { LeaseFailedError, StrictSequenceError } from './errors.js';
import { askInTurn, getJson, requestInit, type Attempt, type TlsMaterial } from './requests.js';

/** The problem code of `POST …/blocks` for a strict sequence. */
export const STRICT_NO_BLOCKS = 'TICKETD_STRICT_NO_BLOCKS';

/** Most IDs one request asks for (ticketd's TICKETD_MAX_COUNT is 10000 unless set lower). */
export const STRICT_MAX_PER_REQUEST = 1000;

/**
 * Per-request timeout when the options give none: above the longest a front end waits out a leader
 * change (3 s) before it answers 503, so a failover is waited out rather than taken for a dead URL.
 */
export const STRICT_TIMEOUT_MS = 5000;

/** What StrictIds needs of the client's options. */
export interface StrictIdsOptions extends TlsMaterial {
  readonly urls: readonly string[];
  readonly sequence: string;
  readonly token?: string;
  readonly timeoutMs?: number;
}

/** A call waiting for its IDs. */
interface Waiter {
  readonly count: number;
  readonly done: (ids: bigint[]) => void;
  readonly fail: (error: unknown) => void;
}

/** The IDs of one strict sequence for one client: at most one request in flight, the calls behind it coalesced. */
export class StrictIds {
  readonly #options: StrictIdsOptions;
  readonly #waiting: Waiter[] = [];
  #inFlight = false;
  #closed = false;
  /** The URL that answered last: requests start there. */
  #preferred = 0;

  constructor(options: StrictIdsOptions) {
    // One object for every request: the keep-alive agent of TLS material is kept per options object.
    this.#options = { ...options, timeoutMs: options.timeoutMs ?? STRICT_TIMEOUT_MS };
  }

  /** One ID, from the next request sent. */
  async next(): Promise<bigint> {
    return (await this.#ask(1))[0]!;
  }

  /** `count` IDs in increasing order, in requests of at most STRICT_MAX_PER_REQUEST, each sent once the one before is answered. */
  async batch(count: number): Promise<bigint[]> {
    const ids: bigint[] = [];
    for (let left = count; left > 0; left -= STRICT_MAX_PER_REQUEST)
      ids.push(...(await this.#ask(Math.min(left, STRICT_MAX_PER_REQUEST))));
    return ids;
  }

  /** nextSync() on a strict sequence. */
  refuseSync(): never {
    throw new StrictSequenceError(
      `sequence ${this.#options.sequence} is strict: each ID comes from ticketd, none is buffered; call next()`,
    );
  }

  /** Refuses the calls still waiting; the request in flight is answered to nobody. */
  close(): void {
    this.#closed = true;
    for (const waiter of this.#waiting.splice(0)) waiter.fail(new LeaseFailedError('client is closed'));
  }

  #ask(count: number): Promise<bigint[]> {
    if (this.#closed) return Promise.reject(new LeaseFailedError('client is closed'));
    return new Promise((done, fail) => {
      this.#waiting.push({ count, done, fail });
      this.#send();
    });
  }

  /** Sends one request for the calls waiting (as many as fit in one), unless one is in flight. */
  #send(): void {
    if (this.#inFlight || this.#waiting.length === 0) return;
    let total = 0;
    let taken = 0;
    while (taken < this.#waiting.length && total + this.#waiting[taken]!.count <= STRICT_MAX_PER_REQUEST)
      total += this.#waiting[taken++]!.count;
    const waiters = this.#waiting.splice(0, taken);
    this.#inFlight = true;
    this.#request(total)
      .then((ids) => {
        let at = 0;
        for (const waiter of waiters) {
          waiter.done(ids.slice(at, at + waiter.count));
          at += waiter.count;
        }
      })
      .catch((error: unknown) => {
        for (const waiter of waiters) waiter.fail(error);
      })
      .finally(() => {
        this.#inFlight = false;
        if (!this.#closed) this.#send();
      });
  }

  async #request(count: number): Promise<bigint[]> {
    type Issued = { ids: string[] };
    const { urls, sequence } = this.#options;
    const { value, index } = await askInTurn(
      urls,
      this.#preferred,
      `no ticketd issued IDs of strict sequence ${sequence}`,
      (url): Promise<Attempt<Issued>> =>
        getJson<Issued>(
          `${url}/v1/sequences/${encodeURIComponent(sequence)}/ids?count=${count}`,
          requestInit(this.#options, 'POST'),
          (b) => Array.isArray(b.ids) && b.ids.length === count,
        ),
    );
    this.#preferred = index;
    return value.ids.map(BigInt);
  }
}
