/**
 * The close-returns scenario of clients/conformance.md, judged the same way for every client: what
 * each client program printed (the IDs a first client took before close(), with its own decoding to
 * the block's ordered IDs, the events its close() reported, and the same for a second client run
 * after it) is checked here, never by the client that handed the IDs out.
 */

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
  /** Repeated IDs across both clients, opaque and ordered (must be 0). */
  readonly repeats: number;
  /** IDs of the second client that lie in a range the first gave back: handed out again. */
  readonly reused: number;
  readonly line: string;
}

function inside(id: bigint, events: readonly CloseEvent[]): boolean {
  return events.some((e) => BigInt(e.first) <= id && id <= BigInt(e.last));
}

function repeats(ids: readonly string[]): number {
  return ids.length - new Set(ids).size;
}

/** Judges a close-returns run: `blockSize` is the sequence's, `take` how many IDs the first client took. */
export function judgeCloseReturns(run: CloseReturnsRun, blockSize: number, take: number): CloseReturnsFigures {
  const failedReturns = run.returns.filter(
    (e) => e.type !== 'returned' || BigInt(e.count) !== BigInt(e.last) - BigInt(e.first) + 1n,
  );
  const returned = run.returns.reduce((n, e) => n + (e.type === 'returned' ? BigInt(e.count) : 0n), 0n);
  const lastTaken = run.takenOrdered.map(BigInt).reduce((m, id) => (id > m ? id : m), 0n);
  const tailFromNextId = run.returns.some((e) => BigInt(e.first) === lastTaken + 1n);
  const takenAndReturned = run.takenOrdered.filter((id) => inside(BigInt(id), run.returns)).length;
  const repeated = repeats([...run.taken, ...run.after]) + repeats([...run.takenOrdered, ...run.afterOrdered]);
  const reused = run.afterOrdered.filter((id) => inside(BigInt(id), run.returns)).length;
  const line =
    `took ${run.taken.length} IDs of a block of ${blockSize}, closed: ${run.returns.length} return(s) answered 200 ` +
    `for ${returned} IDs (${failedReturns.length} failed); a second client took ${run.after.length}, ` +
    `${reused} of them from the range given back; ${repeated} repeated, ${takenAndReturned} handed out and given back`;
  return {
    failedReturns,
    returned,
    tailFromNextId,
    takenAndReturned,
    repeats: repeated,
    reused,
    line: `${line} (first take: ${take})`,
  };
}
