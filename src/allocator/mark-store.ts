/**
 * High-water marks kept on the backends, so that a restarted ticketd (or one started after a
 * backend was restored from an old backup) knows which tickets were already used.
 *
 * Marks are kept per sequence and residue class (ticket ≡ residue mod increment) rather than per
 * server: uniqueness is a property of the residue class, whichever server produces it. A fresh
 * server put behind an old backend's URL, or a restored backup, is caught the same way.
 */
import type { Backend, StoredMark } from '../backend/backend.js';
import type { Stripe } from '../core/ticket-math.js';
import { settleWithin } from '../util/settle-within.js';

/** The stored mark for tickets of this stripe. */
export function markFor(sequence: string, stripe: Stripe, ticket: bigint): StoredMark {
  return { sequence, increment: stripe.increment, residue: stripe.offset % stripe.increment, ticket };
}

/**
 * The highest stored ticket that could share a residue class with `stripe`. Marks written under
 * another increment count when their classes overlap (r ≡ r' mod gcd), e.g. after re-striping.
 */
export function highestOverlapping(marks: readonly StoredMark[], stripe: Stripe): bigint | undefined {
  let highest: bigint | undefined;
  const residue = stripe.offset % stripe.increment;
  for (const m of marks) {
    const g = gcd(m.increment, stripe.increment);
    if (residue % g !== m.residue % g) continue;
    if (highest === undefined || m.ticket > highest) highest = m.ticket;
  }
  return highest;
}

/**
 * Reads the marks of a sequence from the backends: from all that answer, or from those that
 * answer within waitMs when it is given. Returns the marks and how many backends answered.
 */
export async function readMarksEverywhere(
  backends: readonly Backend[],
  sequence: string,
  waitMs?: number,
): Promise<{ marks: StoredMark[]; answered: number }> {
  const reads = backends.map((b) => b.readMarks(sequence));
  const answers =
    waitMs === undefined
      ? (await Promise.allSettled(reads)).flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
      : await settleWithin(reads, waitMs);
  return { marks: answers.flat(), answered: answers.length };
}

/**
 * Resolves true as soon as one of the writes succeeded, false once all of them failed. The mark
 * goes to the peers only, never to the backend it describes: a restored backup would bring its
 * own stale copy back. One copy is enough to be found later.
 */
export function firstSuccess(writes: readonly Promise<unknown>[]): Promise<boolean> {
  if (writes.length === 0) return Promise.resolve(false);
  return new Promise((resolve) => {
    let failed = 0;
    for (const write of writes) {
      write.then(
        () => resolve(true),
        () => {
          if (++failed === writes.length) resolve(false);
        },
      );
    }
  });
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}
