/**
 * What the peers' claims say (invariants 4 and 5 of lane.ts): a ticket is served only after a
 * peer (never the backend it came from) took its claim under the unique key (sequence, ticket);
 * a claim that meets the key, or lies at or below the floor pruned claims leave behind, refuses it.
 */
import { classesOverlap, type ResidueClass, type Stripe } from './stripes.js';

/** What a peer holds for one residue class of a sequence: its highest claim and its floor. */
export interface ClassClaims extends ResidueClass {
  readonly highest: bigint | undefined;
  readonly floor: bigint | undefined;
}

/** What to do when no peer can take a claim: serve on the process marks, or refuse. */
export type ClaimsPolicy = 'preferred' | 'required';

/** One peer's answer to a claim. */
export type ClaimAnswer = 'claimed' | 'claimed-before' | 'failed';

/** What a peer replied to a claim: the floors it read after the insert, the duplicate key's message, or nothing in time. */
export type PeerReply =
  | { readonly kind: 'inserted'; readonly floors: readonly ClassClaims[] }
  | { readonly kind: 'duplicate'; readonly message: string }
  | { readonly kind: 'failed' };

/** Why a chunk's claim refused it: a claim of one of its tickets existed, or it lies at or below a floor. */
export interface ClaimRefusal {
  readonly reason: string;
  readonly cause: 'duplicate' | 'below-floor';
}

/**
 * What each peer's reply means for a chunk of tickets (in the peers' order): an insert whose floors
 * reach the chunk is a `claimed-before` too, since a ticket that old had its claim pruned. Returns
 * the answers and the first refusal.
 */
export function judgeReplies(
  chunk: { readonly sequence: string; readonly tickets: readonly bigint[]; readonly stripe: Stripe },
  replies: readonly { readonly peer: string; readonly reply: PeerReply }[],
): { answers: ClaimAnswer[]; refusal: ClaimRefusal | undefined } {
  let refusal: ClaimRefusal | undefined;
  const answers = replies.map(({ peer, reply }): ClaimAnswer => {
    if (reply.kind === 'failed') return 'failed';
    if (reply.kind === 'duplicate') {
      refusal ??= { reason: reply.message, cause: 'duplicate' };
      return 'claimed-before';
    }
    const floor = floorUnder(chunk.tickets, reply.floors, chunk.stripe);
    if (floor === undefined) return 'claimed';
    refusal ??= {
      reason: `tickets of sequence ${chunk.sequence} from ${chunk.tickets[0]} are at or below the claim floor ${floor} on backend ${peer}`,
      cause: 'below-floor',
    };
    return 'claimed-before';
  });
  return { answers, refusal };
}

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
export function floorUnder(
  tickets: readonly bigint[],
  floors: readonly ClassClaims[],
  stripe: Stripe,
): bigint | undefined {
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
