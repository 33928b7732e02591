/**
 * The close-returns scenario of clients/conformance.md, judged the same way for every client: what
 * each client program printed (the IDs a first client took before close(), with its own decoding to
 * the block's ordered IDs, the events its close() reported, and the same for a second client run
 * after it) is checked here, never by the client that handed the IDs out. Then ticketd's own
 * `POST …/ids` is asked for IDs: a front end's refill hands out ranges given back before fresh
 * tickets (client leases take fresh tickets past the cache), and the admin route decodes them.
 */
import { expect } from '@jest/globals';
import { TEST_ADMIN_TOKEN } from './ticketd.js';

/** One event of a client's close(): IDs first..last of a block's own range, as decimal strings. */
export interface CloseEvent {
  readonly type: string;
  readonly first: string;
  readonly last: string;
  readonly count: number | string;
  readonly codes?: readonly string[];
  readonly error?: string;
}

/** What a client program reported for the two clients. */
export interface CloseReturnsRun {
  readonly taken: readonly string[];
  readonly takenOrdered: readonly string[];
  readonly returns: readonly CloseEvent[];
  readonly after: readonly string[];
  readonly afterOrdered: readonly string[];
  readonly afterReturns: readonly CloseEvent[];
}

/** IDs ticketd served over `POST …/ids`, and their ordered IDs as its admin route decodes them. */
export interface ServedIds {
  readonly ids: readonly string[];
  readonly ordered: readonly string[];
}

/** What the judge found, for the SCENARIO line and for the test's own expectations. */
export interface CloseReturnsFigures {
  /** Events of the first close() that were not a 200 of the return route, or whose count is not its range's size. */
  readonly failedReturns: readonly CloseEvent[];
  /** IDs the first close() gave back. */
  readonly returned: bigint;
  /** Whether a range given back starts right after the last ID the first client took (the block in hand's tail). */
  readonly tailFromNextId: boolean;
  /** IDs the first client handed out that lie in a range it gave back (must be 0). */
  readonly takenAndReturned: number;
  /** Repeated IDs across both clients and ticketd's own answer, opaque and ordered (must be 0). */
  readonly repeats: number;
  /** IDs ticketd served afterwards that lie in a range the first client gave back: handed out again. */
  readonly reused: bigint;
  readonly line: string;
}

/** `count` IDs from ticketd's `POST …/ids` at `url` (with the sequence's client token), each decoded by the admin route. */
export async function serveAndDecode(url: string, sequence: string, token: string, count: number): Promise<ServedIds> {
  const res = await fetch(`${url}/v1/sequences/${sequence}/ids?count=${count}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });
  if (res.status !== 200) throw new Error(`POST …/ids answered ${res.status}: ${await res.text()}`);
  const { ids } = (await res.json()) as { ids: string[] };
  const ordered = await Promise.all(
    ids.map(async (id) => {
      const decoded = await fetch(`${url}/v1/sequences/${sequence}/ids/${id}`, {
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      });
      return ((await decoded.json()) as { ordered: string }).ordered;
    }),
  );
  return { ids, ordered };
}

function inside(id: bigint, events: readonly CloseEvent[]): boolean {
  return events.some((e) => BigInt(e.first) <= id && id <= BigInt(e.last));
}

function repeats(ids: readonly string[]): number {
  return ids.length - new Set(ids).size;
}

/** Judges a close-returns run: `blockSize` is the sequence's; `served` what ticketd's `…/ids` handed out after it. */
export function judgeCloseReturns(run: CloseReturnsRun, blockSize: number, served: ServedIds): CloseReturnsFigures {
  const failedReturns = run.returns.filter(
    (e) => e.type !== 'returned' || BigInt(e.count) !== BigInt(e.last) - BigInt(e.first) + 1n,
  );
  const returned = run.returns.reduce((n, e) => n + (e.type === 'returned' ? BigInt(e.count) : 0n), 0n);
  const lastTaken = run.takenOrdered.map(BigInt).reduce((m, id) => (id > m ? id : m), 0n);
  const tailFromNextId = run.returns.some((e) => BigInt(e.first) === lastTaken + 1n);
  const takenAndReturned = run.takenOrdered.filter((id) => inside(BigInt(id), run.returns)).length;
  const repeated =
    repeats([...run.taken, ...run.after, ...served.ids]) +
    repeats([...run.takenOrdered, ...run.afterOrdered, ...served.ordered]);
  const reused = BigInt(served.ordered.filter((id) => inside(BigInt(id), run.returns)).length);
  const afterReturned = run.afterReturns.reduce((n, e) => n + (e.type === 'returned' ? BigInt(e.count) : 0n), 0n);
  const line =
    `took ${run.taken.length} IDs of a block of ${blockSize} and closed: ${run.returns.length} return(s) answered 200 ` +
    `for ${returned} IDs (${failedReturns.length} failed); a second client took ${run.after.length} and gave ` +
    `${afterReturned} back; ticketd's …/ids then served ${served.ids.length}, ${reused} of them from the ranges the ` +
    `first gave back; ${repeated} repeated, ${takenAndReturned} handed out and given back`;
  return { failedReturns, returned, tailFromNextId, takenAndReturned, repeats: repeated, reused, line };
}

/** What every client's close-returns must show: the 93 IDs after the 7 taken went back once, and ticketd served each again. */
export function expectClosedAndReused(judged: CloseReturnsFigures): void {
  console.log(`SCENARIO close-returns ok: ${judged.line}`);
  expect(judged.failedReturns).toEqual([]);
  expect(judged.returned).toBeGreaterThanOrEqual(93n);
  expect(judged.tailFromNextId).toBe(true);
  expect(judged.takenAndReturned).toBe(0);
  expect(judged.repeats).toBe(0);
  // ticketd counted the return: its next refill served every ID given back.
  expect(judged.reused).toBe(judged.returned);
}
