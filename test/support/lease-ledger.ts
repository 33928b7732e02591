/**
 * Every lease a test took and renewed, as the server answered: when each was held (from its grant
 * to the expiry of its last successful renewal, by the owner's clock), and whether any two leases
 * of one worker ID were held at the same moment.
 */
import { send, takeLease, type Answered } from './worker-pools.js';

interface Held {
  readonly workerId: number;
  readonly epoch: string;
  readonly holder: string;
  readonly from: number;
  until: number;
  lost: boolean;
}

/** Leases of one pool taken through some front ends, kept renewed until `stop()`. */
export class LeaseLedger {
  readonly #pool: string;
  readonly #urls: readonly string[];
  readonly #held: Held[] = [];
  readonly #timers = new Set<ReturnType<typeof setInterval>>();
  readonly statuses = new Map<string, number>();
  #turn = 0;

  constructor(pool: string, urls: readonly string[]) {
    this.#pool = pool;
    this.#urls = urls;
  }

  /** Takes a lease through the next front end; renews it every `renewEveryMs` until it is lost or the ledger stops. */
  async take(holder: string, renewEveryMs: number): Promise<{ status: number; code?: string; workerId?: number }> {
    const url = this.#urls[this.#turn++ % this.#urls.length]!;
    const answer = await takeLease(url, this.#pool, holder).catch((error: unknown): Answered => ({
      status: 0,
      body: { code: String(error) },
      headers: new Headers(),
    }));
    this.#count(`take ${answer.status}${answer.status === 200 ? '' : ` ${String(answer.body.code)}`}`);
    if (answer.status !== 200) return { status: answer.status, code: String(answer.body.code) };
    const b = answer.body;
    const lease: Held = {
      workerId: b.workerId as number,
      epoch: b.epoch as string,
      holder,
      from: b.serverTimeMs as number,
      until: Date.parse(b.expiresAt as string),
      lost: false,
    };
    this.#held.push(lease);
    const timer = setInterval(() => {
      void send(`${url}/v1/worker-pools/${this.#pool}/leases/${lease.workerId}/renew`, { epoch: lease.epoch }).then(
        (r) => {
          this.#count(`renew ${r.status}${r.status === 200 ? '' : ` ${String(r.body.code)}`}`);
          if (r.status === 200 && !lease.lost)
            lease.until = Math.max(lease.until, Date.parse(r.body.expiresAt as string));
          if (r.body.code === 'TICKETD_LEASE_LOST') {
            lease.lost = true;
            clearInterval(timer);
          }
        },
        () => this.#count('renew failed'),
      );
    }, renewEveryMs);
    this.#timers.add(timer);
    return { status: 200, workerId: lease.workerId };
  }

  /** Leases held at `at` (server ms). */
  heldAt(at: number): number {
    return this.#held.filter((l) => l.from <= at && at < l.until).length;
  }

  /** Pairs of leases of one worker ID held at the same time. */
  overlaps(): string[] {
    const found: string[] = [];
    for (let i = 0; i < this.#held.length; i++) {
      for (let j = i + 1; j < this.#held.length; j++) {
        const a = this.#held[i]!;
        const b = this.#held[j]!;
        if (a.workerId === b.workerId && a.from < b.until && b.from < a.until) {
          found.push(
            `worker ${a.workerId}: ${a.holder} (epoch ${a.epoch}, ${a.from}..${a.until}) and ${b.holder} (epoch ${b.epoch}, ${b.from}..${b.until})`,
          );
        }
      }
    }
    return found;
  }

  get taken(): number {
    return this.#held.length;
  }

  stop(): void {
    for (const t of this.#timers) clearInterval(t);
    this.#timers.clear();
  }

  #count(key: string): void {
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
  }
}
