/**
 * The uniqueness argument, with core/ticket-math.ts (ticket → block, parity). Everything that
 * decides whether a ticket's block may be served lives here; the allocator and rejoin only do the
 * I/O these decisions ask for.
 *
 * 1. Stripes: every backend has the same increment and a distinct offset ≤ increment, checked on
 *    every new connection (`stripeProblem`), and every ticket's parity is checked (`accept`).
 * 2. Per-process marks: a ticket at or below the highest this process took from that backend is
 *    refused at once (`accept`). A cheap first filter, not the decisive check: other processes
 *    took tickets too, and an idle process's mark is old.
 * 3. Claims, the decisive check: before a block is served, its ticket is inserted on a peer (never
 *    the backend it came from) under a unique key (sequence, ticket). A second issue of the same
 *    ticket, by any backend, after any regression, meets that key and is refused (`claimVerdict`).
 *    Pruned claims leave a floor behind, and tickets at or below it are refused too, so a restore
 *    to any point in the past is caught.
 * 4. When no peer takes a claim, `mayServeUnclaimed` says what the policy allows.
 * 5. A counter found at or below a used ticket (`isRegressed`) is advanced past every used ticket
 *    known (`regressionTarget`), or quarantined. Advancing only moves it forward; the claims, not
 *    the advance, keep IDs unique, so a too-small advance costs refusals, never duplicates.
 */
import type { ClassClaims } from '../backend/ticket-backend.js';
import { classesOverlap, ownsTicket, type Stripe } from '../core/ticket-math.js';

/** What to do when no peer can take a claim: serve on the process marks, or refuse. */
export type ClaimsPolicy = 'preferred' | 'required';
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

/**
 * Returns why `candidate` (the settings a connection to backend `label` reports) cannot join the
 * backends already pinned, or undefined when it can. `backendCount` is how many are configured.
 */
export function stripeProblem(label: string, candidate: Stripe, pinned: ReadonlyMap<string, Stripe>, backendCount: number): string | undefined {
  const { increment, offset } = candidate;
  if (offset > increment) {
    // MySQL silently ignores an offset above the increment and behaves as if it were 1.
    return `backend ${label} has auto_increment_offset=${offset} > auto_increment_increment=${increment}`;
  }
  if (increment < BigInt(backendCount)) {
    return `backend ${label} has auto_increment_increment=${increment}, smaller than the ${backendCount} backends configured`;
  }
  const own = pinned.get(label);
  if (own !== undefined && (own.increment !== increment || own.offset !== offset)) {
    return `backend ${label} now has auto_increment_increment=${increment}, auto_increment_offset=${offset}; it had ${own.increment}/${own.offset}`;
  }
  for (const [other, stripe] of pinned) {
    if (other === label) continue;
    if (stripe.increment !== increment) {
      return `backend ${label} has auto_increment_increment=${increment}, but ${other} has ${stripe.increment}`;
    }
    if (stripe.offset % increment === offset % increment) {
      return `backend ${label} has auto_increment_offset=${offset}, same as ${other}`;
    }
  }
  return undefined;
}

/** Why `accept` stopped at a ticket. */
export interface Refusal {
  readonly ticket: bigint;
  readonly reason: string;
  /** True when the ticket has the backend's parity: its counter went back, and can be advanced. */
  readonly regressed: boolean;
}

/**
 * Which tickets of a run (in the order fetched) pass parity and the process mark: the leading ones
 * up to the first refused. Pure: the caller raises the mark to the last accepted ticket.
 */
export function accept(tickets: readonly bigint[], stripe: Stripe, mark: bigint | undefined, where: string): { accepted: bigint[]; refused?: Refusal } {
  const accepted: bigint[] = [];
  let highest = mark;
  for (const ticket of tickets) {
    if (!ownsTicket(ticket, stripe)) {
      return { accepted, refused: { ticket, regressed: false, reason: `${where} returned ticket ${ticket}, which is not ≡ ${stripe.offset} (mod ${stripe.increment})` } };
    }
    if (highest !== undefined && ticket <= highest) {
      return { accepted, refused: { ticket, regressed: true, reason: `${where} returned ticket ${ticket}, at or below ticket ${highest} seen before` } };
    }
    accepted.push(ticket);
    highest = ticket;
  }
  return { accepted };
}

/** One peer's answer to a claim. */
export type ClaimAnswer = 'claimed' | 'claimed-before' | 'failed';

/**
 * What the peers' answers mean for a chunk: any `claimed-before` refuses it (the ticket was served
 * before, or lies below a floor); otherwise one peer holding the claim is enough to serve it;
 * with none, the chunk is `unclaimed` and `mayServeUnclaimed` decides.
 */
export function claimVerdict(answers: readonly ClaimAnswer[]): 'claimed' | 'claimed-before' | 'unclaimed' {
  if (answers.includes('claimed-before')) return 'claimed-before';
  return answers.includes('claimed') ? 'claimed' : 'unclaimed';
}

/**
 * The floor a claimed chunk lies at or below, if any: the claim went in, but a ticket that old had
 * its claim pruned, so it may have been served before. Undefined when the chunk is above every
 * floor of an overlapping class.
 */
export function floorUnder(tickets: readonly bigint[], floors: readonly ClassClaims[], stripe: Stripe): bigint | undefined {
  const floor = highestUsed(floors, stripe);
  const lowest = tickets.reduce((min, t) => (t < min ? t : min));
  return floor !== undefined && lowest <= floor ? floor : undefined;
}

/** Whether tickets no peer could claim may be served, on the process marks alone. */
export function mayServeUnclaimed(policy: ClaimsPolicy): boolean {
  return policy === 'preferred';
}

/** The highest ticket known used in the stripe's class: the highest claim or floor of any overlapping class. */
export function highestUsed(classes: readonly ClassClaims[], stripe: Stripe): bigint | undefined {
  let highest: bigint | undefined;
  for (const c of classes) {
    if (!classesOverlap(c, stripe)) continue;
    for (const t of [c.highest, c.floor]) if (t !== undefined && (highest === undefined || t > highest)) highest = t;
  }
  return highest;
}

/** True when a backend's counter would issue a ticket at or below one already used of its class: it went back. */
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
  // Keeps IDs roughly time-ordered after an outage; ALTER never lowers and keeps parity.
  return leaderNext > ownNext + CATCH_UP_MIN_LAG_TICKETS * stripe.increment ? leaderNext : undefined;
}

/**
 * Per backend and sequence, the highest ticket this process accepted (or learnt of from the
 * claims). Only ever raised.
 */
export class HighWaterMarks {
  readonly #marks = new Map<string, bigint>();

  /** Raises a mark to at least `ticket`; never lowers it. */
  raise(backend: string, sequence: string, ticket: bigint): void {
    const key = `${backend}\u0000${sequence}`;
    const mark = this.#marks.get(key);
    if (mark === undefined || ticket > mark) this.#marks.set(key, ticket);
  }

  /** The highest ticket known, or undefined. */
  get(backend: string, sequence: string): bigint | undefined {
    return this.#marks.get(`${backend}\u0000${sequence}`);
  }
}
