/** Invariant 1: every backend has the same increment and a distinct offset ≤ increment. */
import type { Stripe } from './ticket-math.js';

/**
 * Returns why `candidate` (the settings a connection to backend `label` reports) cannot join the
 * backends already pinned, or undefined when it can. `backendCount` is how many are configured.
 */
export function stripeProblem(
  label: string,
  candidate: Stripe,
  pinned: ReadonlyMap<string, Stripe>,
  backendCount: number,
): string | undefined {
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
