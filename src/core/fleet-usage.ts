/**
 * The fleet's figures of a sequence, from the rows every front end wrote to the backends (usage.ts).
 * Each instance counts once, by its row of the highest flush number found on any backend (a backend
 * restored from a backup holds older rows, which lose). An instance whose row stopped being
 * rewritten and never said it stopped crashed: what it leased and had not reported as handed out,
 * returned or abandoned is lost to the crash, IDs it handed out after its last write included
 * (and IDs it leased after its last write are in no figure: nobody heard of them).
 */
import { LOSS_REASONS, NO_LOSS, totalAbandoned, type LossReason, type StoredUsageRow } from './usage.js';

/** A row not rewritten for this many of its instance's flush intervals (and the margin) is a crashed instance's. */
export const STALE_AFTER_FLUSHES = 3;
/** Added to the staleness bound: a write may wait on a slow backend for a query timeout. */
export const STALE_MARGIN_MS = 2000;

/** The fleet's figures of one sequence. */
export interface FleetUsage {
  readonly sequence: string;
  /** Instances that wrote rows: running now, stopped cleanly, or crashed. */
  readonly instances: { readonly running: number; readonly stopped: number; readonly crashed: number };
  readonly leased: number;
  readonly handedOut: number;
  readonly returned: number;
  readonly reclaimed: number;
  /** Cached by the running instances, as their last writes said. */
  readonly cached: number;
  readonly lost: Readonly<Record<LossReason, number>>;
  readonly lostTotal: number;
  /** Lost over lost + handed out: the share of the IDs used up that nobody received; null before any. */
  readonly lossRatio: number | null;
  /**
   * When it runs out: the shortest forecast of the running instances (seconds until maxId at the
   * fleet's recent rate, as each wrote it last); null when none of them has a rate.
   */
  readonly secondsLeft: number | null;
}

/** How one instance's last row reads: running, stopped cleanly, or crashed (stale and not stopped). */
export function instanceState(row: StoredUsageRow): 'running' | 'stopped' | 'crashed' {
  if (row.stopped) return 'stopped';
  return row.ageMs > STALE_AFTER_FLUSHES * row.flushEveryMs + STALE_MARGIN_MS ? 'crashed' : 'running';
}

/** Each (sequence, instance)'s row of the highest flush number, of the rows every backend gave. */
export function latestPerInstance(rows: readonly StoredUsageRow[]): StoredUsageRow[] {
  const latest = new Map<string, StoredUsageRow>();
  for (const row of rows) {
    const key = `${row.sequence} ${row.instance}`;
    const known = latest.get(key);
    // The same flush on two backends: the younger copy, whose backend's clock saw it written last.
    if (known === undefined || row.flush > known.flush || (row.flush === known.flush && row.ageMs < known.ageMs))
      latest.set(key, row);
  }
  return [...latest.values()];
}

/** The fleet's figures per sequence, sorted by name, from the rows of every backend. */
export function fleetUsage(rows: readonly StoredUsageRow[]): FleetUsage[] {
  const bySequence = new Map<string, StoredUsageRow[]>();
  for (const row of latestPerInstance(rows)) {
    const list = bySequence.get(row.sequence) ?? [];
    list.push(row);
    bySequence.set(row.sequence, list);
  }
  return [...bySequence.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([sequence, list]) => sumSequence(sequence, list));
}

function sumSequence(sequence: string, rows: readonly StoredUsageRow[]): FleetUsage {
  const instances = { running: 0, stopped: 0, crashed: 0 };
  const lost: Record<LossReason, number> = { ...NO_LOSS };
  let leased = 0;
  let handedOut = 0;
  let returned = 0;
  let reclaimed = 0;
  let cached = 0;
  let secondsLeft: number | null = null;
  for (const row of rows) {
    const state = instanceState(row);
    instances[state]++;
    if (state === 'running' && row.secondsLeft !== null)
      secondsLeft = secondsLeft === null ? row.secondsLeft : Math.min(secondsLeft, row.secondsLeft);
    const c = row.counts;
    leased += c.leased;
    handedOut += c.handedOut;
    returned += c.returned;
    reclaimed += c.reclaimed;
    for (const reason of LOSS_REASONS) lost[reason] += c.abandoned[reason];
    // A crashed instance's cache, and whatever it did since its last write, is lost to the crash.
    if (state === 'crashed') lost.crash += c.leased - c.handedOut - c.returned - totalAbandoned(c);
    else cached += c.cached;
  }
  const lostTotal = LOSS_REASONS.reduce((sum, reason) => sum + lost[reason], 0);
  return {
    sequence,
    instances,
    leased,
    handedOut,
    returned,
    reclaimed,
    cached,
    lost,
    lostTotal,
    lossRatio: lostTotal + handedOut === 0 ? null : lostTotal / (lostTotal + handedOut),
    secondsLeft,
  };
}
