/**
 * Fencing after every backend was restored (docs/operating.md, "Restoring every backend"). Nothing
 * in a fleet whose backends all went back remembers what was issued after the backup, and claims
 * cannot refuse what they never saw. So each counter moves past anything that can have been issued
 * since: from the highest ticket the restored data holds, by the fleet's rate (read off the claims
 * kept, by each server's own clock) times the time since the newest claim, times a margin; or by
 * a bound the operator gives.
 */
import { blockForTicket, type BlockSettings } from './blocks.js';
import type { ResidueClass } from './stripes.js';

/** What one backend's claims of one residue class of a sequence say: the kept claims' range in tickets and in time. */
export interface ClaimHistory extends ResidueClass {
  readonly lowest: bigint;
  readonly highest: bigint;
  readonly claims: number;
  /** Milliseconds between the oldest and the newest kept claim. */
  readonly spanMs: number;
  /** Milliseconds since the newest claim, by the same server's clock. */
  readonly ageMs: number;
}

/** What a fence of one sequence starts from. */
export interface FenceInput {
  readonly settings: BlockSettings;
  /** The highest ticket any backend's counter or claims hold. */
  readonly highestTicket: bigint;
  /** Every backend's claim histories of the sequence. */
  readonly histories: readonly ClaimHistory[];
  /** The largest auto_increment_increment among the backends: one ticket moves a counter by this much. */
  readonly increment: bigint;
  /** Factor on the rate times the time since the backup. */
  readonly margin: number;
  /** The operator's bound: at most this many tickets of the sequence were taken since the backup. */
  readonly ticketsBound?: bigint;
}

/** Where a sequence's counters go, and why. */
export interface FencePlan {
  /** The next ticket every counter must be at or above. */
  readonly nextTicket: bigint;
  readonly advance: bigint;
  /** `rate`: from the claims; `bound`: the operator's; `minimum`: no claims to measure a rate. */
  readonly basis: 'rate' | 'bound' | 'minimum';
  /** Counter units per second over the claims kept, summed over the residue classes. */
  readonly ticketsPerSecond: number | undefined;
  /** Milliseconds since the newest claim on any backend. */
  readonly sinceMs: number | undefined;
  /** True when the fence would leave no block at or below maxId. */
  readonly exhausts: boolean;
}

/** The default margin on the measured rate: peaks above the kept claims' average, clocks, the time to run the runbook. */
export const DEFAULT_FENCE_MARGIN = 4;
/** Tickets a fence moves each counter by at least (times the increment). */
export const MIN_FENCE_TICKETS = 1000n;
/** Time added to the time since the newest claim: the backup may have been taken after it, and traffic went on. */
export const FENCE_SLACK_MS = 60_000;

/** Plans the fence of one sequence. */
export function planFence(input: FenceInput): FencePlan {
  const minimum = MIN_FENCE_TICKETS * input.increment;
  const ticketsPerSecond = fleetRate(input.histories);
  const sinceMs = input.histories.length === 0 ? undefined : Math.min(...input.histories.map((h) => h.ageMs));
  let advance: bigint;
  let basis: FencePlan['basis'];
  if (input.ticketsBound !== undefined) {
    advance = input.ticketsBound * input.increment;
    basis = 'bound';
  } else if (ticketsPerSecond !== undefined && sinceMs !== undefined) {
    advance = BigInt(Math.ceil((ticketsPerSecond * (sinceMs + FENCE_SLACK_MS) * input.margin) / 1000));
    basis = 'rate';
  } else {
    advance = 0n;
    basis = 'minimum';
  }
  if (advance < minimum) advance = minimum;
  const nextTicket = input.highestTicket + advance + 1n;
  return {
    nextTicket,
    advance,
    basis,
    ticketsPerSecond,
    sinceMs,
    exhausts: blockForTicket(nextTicket, input.settings).kind === 'exhausted',
  };
}

/**
 * The fleet's rate in counter units per second: per residue class the fastest any backend's kept
 * claims show, summed over the classes (when one backend is down, another takes its share: the sum
 * covers that). Undefined when no class has two claims.
 */
function fleetRate(histories: readonly ClaimHistory[]): number | undefined {
  const byClass = new Map<string, number>();
  for (const h of histories) {
    if (h.claims < 2) continue;
    // A span under a second is read as a second: bursts are covered by the margin, not by dividing by ~0.
    const rate = (Number(h.highest - h.lowest) * 1000) / Math.max(h.spanMs, 1000);
    const key = `${h.increment}/${h.residue}`;
    byClass.set(key, Math.max(byClass.get(key) ?? 0, rate));
  }
  if (byClass.size === 0) return undefined;
  return [...byClass.values()].reduce((a, b) => a + b, 0);
}
