/**
 * What one front end did with the IDs it leased, per sequence: the running totals it keeps in memory
 * and writes to every backend (docs/operating.md, "How many IDs were lost, and why"). Every ID a
 * front end leased is, at any moment, handed out, returned (given back for reuse), abandoned (lost,
 * for a reason) or still cached:
 *
 *   leased = handedOut + returned + abandoned + cached
 *
 * Counts of IDs, not IDs: plain numbers, as the cache keeps them (2^53 IDs are far beyond a process).
 */

/**
 * Why leased IDs were never handed out: `shutdown` (a clean stop or drain left the cache's tail),
 * `retired` (the sequence was retired while IDs of it were cached), `surplus` (a block fetched for a
 * client beyond the one it got: a refill hedged past a slow backend brought two), `crash` (a front
 * end stopped without saying so; only readers of the fleet's rows find it: see fleet-usage.ts).
 */
export const LOSS_REASONS = ['shutdown', 'retired', 'surplus', 'crash'] as const;
export type LossReason = (typeof LOSS_REASONS)[number];

/** The reasons a front end records itself (a crash is told by the others). */
export type OwnLossReason = Exclude<LossReason, 'crash'>;

/** One front end's figures of one sequence. `reclaimed`: returned IDs it leased again (counted in `leased` too). */
export interface UsageCounts {
  readonly leased: number;
  readonly handedOut: number;
  readonly returned: number;
  readonly reclaimed: number;
  readonly cached: number;
  readonly abandoned: Readonly<Record<LossReason, number>>;
}

/**
 * What a front end's cache of a sequence holds now: IDs it handed out from the cache, and IDs it
 * holds and has not handed out. `retired`: the sequence was dropped, so what it holds is abandoned.
 */
export interface Holding {
  readonly sequence: string;
  readonly handedOut: number;
  readonly held: number;
  readonly retired: boolean;
}

/** One front end's row of one sequence, as written to every backend. */
export interface UsageRow {
  readonly sequence: string;
  /** The front end instance (a process, or a worker of `serve --workers`): random at each start. */
  readonly instance: string;
  /** Grows with every write of the instance: readers keep its highest. */
  readonly flush: number;
  /** True in the last write of a clean stop. */
  readonly stopped: boolean;
  /** How often the instance writes; a row older than a few of these, not stopped, is a crash. */
  readonly flushEveryMs: number;
  /** The instance's forecast when it wrote: seconds until maxId at the fleet's recent rate (capacity.ts); null without a rate. */
  readonly secondsLeft: number | null;
  readonly counts: UsageCounts;
}

/** A row as a backend holds it, with its age by that backend's own clock. */
export interface StoredUsageRow extends UsageRow {
  readonly ageMs: number;
}

interface Settled {
  leased: number;
  handedOut: number;
  returned: number;
  reclaimed: number;
  abandoned: Record<OwnLossReason, number>;
}

/** Nothing lost, for figures that add up reasons. */
export const NO_LOSS: Readonly<Record<LossReason, number>> = Object.freeze({
  shutdown: 0,
  retired: 0,
  surplus: 0,
  crash: 0,
});

/**
 * The running totals of one front end. Events that are not visible in the caches later (leases,
 * blocks leased to clients, returns) are counted here as they happen; what the caches hold and
 * handed out is read from them when figures are asked for (`holdings`), so the request path pays nothing.
 */
export class UsageTally {
  readonly #settled = new Map<string, Settled>();

  /** IDs taken from the backends: a cache's refill, or a block leased to a client. */
  leased(sequence: string, count: number): void {
    this.#of(sequence).leased += count;
  }

  /** IDs handed out past the caches (a whole block leased to a client). */
  handedOut(sequence: string, count: number): void {
    this.#of(sequence).handedOut += count;
  }

  /** Unused IDs given back for another front end to hand out. */
  returned(sequence: string, count: number): void {
    this.#of(sequence).returned += count;
  }

  /** Returned IDs leased again by this front end (call leased() for them as well). */
  reclaimed(sequence: string, count: number): void {
    this.#of(sequence).reclaimed += count;
  }

  /** IDs this front end leased and will never hand out, and why. */
  abandoned(sequence: string, reason: OwnLossReason, count: number): void {
    this.#of(sequence).abandoned[reason] += count;
  }

  /**
   * Figures per sequence: what was counted, with what the caches hold now. Once `stopped`, nothing
   * more is handed out, so what is still cached is abandoned for `shutdown`.
   */
  figures(holdings: readonly Holding[], stopped = false): Map<string, UsageCounts> {
    const held = new Map<string, { handedOut: number; cached: number; retired: number }>();
    for (const h of holdings) {
      this.#of(h.sequence);
      const sum = held.get(h.sequence) ?? { handedOut: 0, cached: 0, retired: 0 };
      sum.handedOut += h.handedOut;
      if (h.retired) sum.retired += h.held;
      else sum.cached += h.held;
      held.set(h.sequence, sum);
    }
    const figures = new Map<string, UsageCounts>();
    for (const [sequence, s] of this.#settled) {
      const h = held.get(sequence) ?? { handedOut: 0, cached: 0, retired: 0 };
      figures.set(sequence, {
        leased: s.leased,
        handedOut: s.handedOut + h.handedOut,
        returned: s.returned,
        reclaimed: s.reclaimed,
        cached: stopped ? 0 : h.cached,
        abandoned: {
          shutdown: s.abandoned.shutdown + (stopped ? h.cached : 0),
          retired: s.abandoned.retired + h.retired,
          surplus: s.abandoned.surplus,
          crash: 0,
        },
      });
    }
    return figures;
  }

  #of(sequence: string): Settled {
    let s = this.#settled.get(sequence);
    if (s === undefined) {
      s = { leased: 0, handedOut: 0, returned: 0, reclaimed: 0, abandoned: { shutdown: 0, retired: 0, surplus: 0 } };
      this.#settled.set(sequence, s);
    }
    return s;
  }
}

/** Every ID abandoned, whatever the reason. */
export function totalAbandoned(counts: UsageCounts): number {
  return LOSS_REASONS.reduce((sum, reason) => sum + counts.abandoned[reason], 0);
}
