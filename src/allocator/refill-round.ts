/**
 * One round of a refill: lanes on several backends at once, resolved as soon as it is worth it.
 * - It resolves `graceMs` after the first blocks arrived, or when every lane is done.
 * - After `hedgeMs` without blocks, or when every lane ended empty, a spare backend is asked too,
 *   so that one hung backend costs a request at most about hedgeMs.
 * - Blocks that arrive after it resolved go to `onLate`: never dropped, never handed out twice.
 */
import type { IdRange } from '../core/blocks.js';

/** A backend's share of a round. */
export interface RoundLane<S> {
  readonly slot: S;
  readonly count: number;
}

/** How a round runs. */
export interface RoundOptions<S> {
  readonly lanes: readonly RoundLane<S>[];
  /** Backends not asked unless the lanes stall or come back empty (consumed in order). */
  readonly spares: S[];
  /** Runs one lane: passes blocks to `deliver` as they are ready; says whether a retry may help. */
  readonly run: (slot: S, count: number, deliver: (ranges: IdRange[]) => void) => Promise<{ retry: boolean }>;
  readonly onLate: (ranges: IdRange[]) => void;
  readonly graceMs: number;
  readonly hedgeMs: number;
  /** Told when a lane ends, with how long it took and whether the round had resolved already. */
  readonly onLaneEnd?: (slot: S, count: number, late: boolean) => void;
}

/** What a round produced. */
export interface RoundResult {
  readonly ranges: IdRange[];
  readonly retry: boolean;
}

/** Runs the round; never rejects (a lane that throws counts as empty and retryable). */
export function runRound<S>(options: RoundOptions<S>): Promise<RoundResult> {
  const { spares, run, onLate } = options;
  if (options.lanes.length === 0) return Promise.resolve({ ranges: [], retry: false });
  return new Promise((resolve) => {
    const ranges: IdRange[] = [];
    let retry = false;
    let pending = 0;
    let done = false;
    let grace: NodeJS.Timeout | undefined;
    const finish = (): void => {
      done = true;
      clearTimeout(grace);
      clearTimeout(hedge);
      resolve({ ranges, retry });
    };
    const deliver = (got: IdRange[]): void => {
      if (got.length === 0) return;
      if (done) {
        onLate(got);
        return;
      }
      ranges.push(...got);
      grace ??= setTimeout(finish, options.graceMs);
    };
    const start = (slot: S, count: number): void => {
      pending++;
      void run(slot, count, deliver)
        .catch(() => ({ retry: true }))
        .then((lane) => {
          options.onLaneEnd?.(slot, count, done);
          pending--;
          if (done) return;
          retry ||= lane.retry;
          if (pending > 0) return;
          if (ranges.length > 0 || spares.length === 0) finish();
          else start(spares.shift()!, 1);
        });
    };
    const hedge = setTimeout(() => {
      if (!done && ranges.length === 0 && spares.length > 0) start(spares.shift()!, 1);
    }, options.hedgeMs);
    for (const { slot, count } of options.lanes) start(slot, count);
  });
}
