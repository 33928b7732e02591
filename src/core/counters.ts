/**
 * Tickets against what is known used (steps 3 and 7 of lane.ts): parity and the mark, and where a
 * counter that went back must move.
 */
import { ownsTicket, type Stripe } from './stripes.js';

/** What to do with a backend whose counter is at or below a ticket already used. */
export type RegressionPolicy = 'advance' | 'quarantine';

/**
 * How far past the highest used ticket a regressed counter is advanced. Other processes may hold
 * tickets fetched just before the regression and not claimed yet; skipping past them saves a run
 * of refused claims. Only spent when a counter went back.
 */
export const REGRESSION_GAP_TICKETS = 4096n;
/** A returning backend whose counter trails the leader's by more tickets than this is advanced. */
export const CATCH_UP_MIN_LAG_TICKETS = 64n;

/** Why a run of tickets stopped at one. */
export interface Refusal {
  readonly ticket: bigint;
  readonly reason: string;
  /** True when the ticket has the backend's parity: its counter went back, and can be advanced. */
  readonly regressed: boolean;
}

/** True when a counter would issue a ticket at or below one already used of its class: it went back. */
export function isRegressed(nextTicket: bigint, used: bigint | undefined): boolean {
  return used !== undefined && nextTicket <= used;
}

/** The lowest next ticket for a regressed counter: past every used ticket known, plus the gap. */
export function regressionTarget(known: readonly (bigint | undefined)[], stripe: Stripe): bigint {
  const highest = known.reduce<bigint>((max, t) => (t !== undefined && t > max ? t : max), 0n);
  return highest + REGRESSION_GAP_TICKETS * stripe.increment + 1n;
}

/**
 * The next ticket a returning backend should move to (from its own next ticket and the highest of
 * its peers'), or undefined when it is close enough to the leader.
 */
export function catchUpTarget(ownNext: bigint, leaderNext: bigint, stripe: Stripe): bigint | undefined {
  // Keeps IDs roughly time-ordered after an outage; an advance never lowers and keeps parity.
  return leaderNext > ownNext + CATCH_UP_MIN_LAG_TICKETS * stripe.increment ? leaderNext : undefined;
}

/**
 * Which tickets of a run (in the order fetched) pass parity and the mark: the leading ones up to
 * the first refused.
 */
export function accept(
  tickets: readonly bigint[],
  stripe: Stripe,
  mark: bigint | undefined,
  where: string,
): { accepted: bigint[]; refused?: Refusal } {
  const accepted: bigint[] = [];
  let highest = mark;
  for (const ticket of tickets) {
    if (!ownsTicket(ticket, stripe)) {
      return {
        accepted,
        refused: {
          ticket,
          regressed: false,
          reason: `${where} returned ticket ${ticket}, which is not ≡ ${stripe.offset} (mod ${stripe.increment})`,
        },
      };
    }
    if (highest !== undefined && ticket <= highest) {
      return {
        accepted,
        refused: {
          ticket,
          regressed: true,
          reason: `${where} returned ticket ${ticket}, at or below ticket ${highest} seen before`,
        },
      };
    }
    accepted.push(ticket);
    highest = ticket;
  }
  return { accepted };
}
