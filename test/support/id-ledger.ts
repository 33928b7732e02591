import { putSequence } from './ticketd.js';

/**
 * Every acknowledged ID of a test, with who served it, and continuous load on ticketd servers:
 * for tests that must see an ID served twice if the guarantee breaks.
 */

/** Acknowledged IDs; a repeat is recorded with both servers that served it. */
export class IdLedger {
  readonly #owner = new Map<string, string>();
  readonly #servedBy = new Map<string, number>();
  readonly repeats: string[] = [];
  readonly statuses = new Map<number, number>();
  acknowledged = 0;
  /** The longest time, in ms, between two answers that carried IDs (across every client): the stall. */
  longestStallMs = 0;
  #lastAckAt: number | undefined;

  /** One request for `count` IDs to a server; records what came back. Never throws. */
  async request(url: string, who: string, sequence: string, count: number): Promise<number> {
    let status: number;
    try {
      const res = await fetch(`${url}/v1/sequences/${sequence}/ids?count=${count}`, {
        method: 'POST',
        signal: AbortSignal.timeout(5000),
      });
      status = res.status;
      const body = (await res.json()) as { ids?: string[] };
      if (status === 200) {
        for (const id of body.ids ?? []) this.record(id, who);
        const now = performance.now();
        if (this.#lastAckAt !== undefined) this.longestStallMs = Math.max(this.longestStallMs, now - this.#lastAckAt);
        this.#lastAckAt = now;
      }
    } catch {
      status = 0;
    }
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    return status;
  }

  /** One acknowledged ID (from an HTTP answer, or an SDK client's next()). */
  record(id: string, who: string): void {
    this.acknowledged++;
    this.#servedBy.set(who, (this.#servedBy.get(who) ?? 0) + 1);
    const before = this.#owner.get(id);
    if (before !== undefined) this.repeats.push(`${id} by ${before} and ${who}`);
    else this.#owner.set(id, who);
  }

  /** How many IDs `who` acknowledged so far. */
  servedBy(who: string): number {
    return this.#servedBy.get(who) ?? 0;
  }

  /** Every ID acknowledged so far. */
  ids(): IterableIterator<string> {
    return this.#owner.keys();
  }

  /** How many IDs were acknowledged once each. */
  get unique(): number {
    return this.#owner.size;
  }

  /** The highest ticket of each residue class (mod 2) acknowledged so far, for a block size. */
  highestTicket(blockSize: bigint, residue: bigint): bigint {
    let highest = 0n;
    for (const id of this.#owner.keys()) {
      const t = BigInt(id) / blockSize;
      if (t % 2n === residue && t > highest) highest = t;
    }
    return highest;
  }
}

/** Clients sending requests in a loop to the servers until stopped; counts vary from 1 to 40. */
export function startLoad(
  ledger: IdLedger,
  servers: readonly { url: string; name: string }[],
  sequence: string,
  clients: number,
): { stop(): Promise<void> } {
  let running = true;
  const loops = Array.from({ length: clients }, async (_, c) => {
    for (let n = c; running; n += clients) {
      const server = servers[n % servers.length]!;
      const status = await ledger.request(server.url, server.name, sequence, 1 + (n % 40));
      if (status !== 200) await new Promise((r) => setTimeout(r, 20));
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Two busy ticketd processes and one idle one, on the same backends, sharing one ledger. */
export interface Fleet {
  readonly ledger: IdLedger;
  readonly busy: readonly { url: string; name: string }[];
  readonly idle: { url: string; name: string };
}

/**
 * Creates the sequence, lets the idle process (the third server) take a few blocks, which it then
 * keeps while it idles, and names the two busy ones for startLoad.
 */
export async function startFleet(
  servers: readonly { url: string }[],
  sequence: string,
  blockSize: bigint,
): Promise<Fleet> {
  const [a, b, c] = servers as [{ url: string }, { url: string }, { url: string }];
  const created = await putSequence(a.url, sequence, { blockSize: Number(blockSize) });
  if (created !== 201) throw new Error(`PUT ${sequence} answered ${created}`);
  const ledger = new IdLedger();
  const idle = { url: c.url, name: 'idle' };
  for (let i = 0; i < 5; i++) {
    const status = await ledger.request(idle.url, idle.name, sequence, 40);
    if (status !== 200) throw new Error(`the idle process got ${status}`);
  }
  return {
    ledger,
    idle,
    busy: [
      { url: a.url, name: 'busy-1' },
      { url: b.url, name: 'busy-2' },
    ],
  };
}

/** Resolves after ms milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
