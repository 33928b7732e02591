/**
 * A load on a strict sequence over several front ends that records every answered request's send
 * and receive time (this process's monotonic clock) and IDs, for the linearizability checker.
 */
import type { Operation } from './linearizability.js';

/** A load running until stop(). */
export interface StrictLoad {
  readonly history: Operation[];
  /** Answers by status (0: no answer: a refused connection, a timeout). */
  readonly statuses: Record<string, number>;
  /** One more request to a front end, recorded like the others (a probe of a stopped process). */
  send(via: string, base: string, count?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Workers bound to front ends in turn (worker w to the w-th of `targets()` modulo their number, read
 * before each request, so a test can take one out); each sends its next request once its last is answered.
 */
export function strictLoad(
  sequence: string,
  targets: () => ReadonlyMap<string, string>,
  options: { concurrency?: number; counts?: readonly number[] } = {},
): StrictLoad {
  const history: Operation[] = [];
  const statuses: Record<string, number> = {};
  const counts = options.counts ?? [1, 1, 3, 10];
  let running = true;
  const send = async (via: string, base: string, count = 1, next = count === 1): Promise<void> => {
    const sentAt = performance.now();
    try {
      const res = await fetch(
        next ? `${base}/v1/sequences/${sequence}/next` : `${base}/v1/sequences/${sequence}/ids?count=${count}`,
        { method: next ? 'GET' : 'POST', signal: AbortSignal.timeout(20_000) },
      );
      const body = (await res.json()) as { id?: string; ids?: string[] };
      const answeredAt = performance.now();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      if (res.status === 200)
        history.push({ sentAt, answeredAt, ids: (next ? [body.id!] : body.ids!).map(BigInt), via });
      else await new Promise((r) => setTimeout(r, 20));
    } catch {
      statuses[0] = (statuses[0] ?? 0) + 1;
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const loop = async (worker: number): Promise<void> => {
    for (let i = 0; running; i++) {
      const fronts = [...targets()];
      const [via, base] = fronts[worker % fronts.length]!;
      const count = counts[(i + worker) % counts.length]!;
      await send(via, base, count, count === 1 && i % 2 === 0);
    }
  };
  const loops = Array.from({ length: options.concurrency ?? 12 }, (_, w) => loop(w));
  return {
    history,
    statuses,
    send: (via, base, count = 1) => send(via, base, count, false),
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** The longest time without an answer of the load within [from, to] (ms of this process's monotonic clock). */
export function longestGap(history: readonly Operation[], from: number, to: number): number {
  const times = history
    .map((o) => o.answeredAt)
    .filter((t) => t >= from && t <= to)
    .sort((a, b) => a - b);
  let gap = 0;
  let last = from;
  for (const t of times) {
    gap = Math.max(gap, t - last);
    last = t;
  }
  return Math.max(gap, to - last);
}
