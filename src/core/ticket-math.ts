/**
 * The arithmetic of the uniqueness argument; src/allocator/ticket-guard.ts holds the rest.
 *
 * A ticket t owns the ID block [t·B, t·B + B − 1]; blocks of different tickets never overlap, so
 * ticketd never issues an ID twice as long as no ticket's block is served twice. Every backend owns
 * a distinct residue class of tickets (its auto_increment_offset modulo a shared increment), which
 * `ownsTicket` checks for every ticket; the ticket guard makes sure each ticket is served once.
 */

/** Largest value a BIGINT UNSIGNED column (and so any ticketd ID) can hold: 2^64 − 1. */
export const MAX_UINT64 = (1n << 64n) - 1n;

/** The settings of a sequence that decide which IDs a ticket maps to. */
export interface BlockSettings {
  readonly blockSize: bigint;
  /** Every ID is greater than this (0 when the sequence has no floor). */
  readonly startAfter: bigint;
  /** No ID is greater than this. */
  readonly maxId: bigint;
}

/** An inclusive range of IDs: first ≤ last. */
export interface IdRange {
  readonly first: bigint;
  readonly last: bigint;
}

/** The residue class a backend owns: tickets t with t ≡ offset (mod increment). */
export interface Stripe {
  readonly increment: bigint;
  readonly offset: bigint;
}

/** What one ticket is worth for a sequence. */
export type BlockOutcome =
  | { readonly kind: 'range'; readonly range: IdRange }
  | { readonly kind: 'below-start' }
  | { readonly kind: 'exhausted' };

/** Converts a mysql2 insertId into an exact ticket; rejects anything that is not a positive integer. */
export function toTicket(insertId: unknown): bigint {
  // insertId arrives as a number below 2^53 and as a string above it; Number would round it.
  if (typeof insertId === 'number' && !Number.isSafeInteger(insertId)) {
    throw new RangeError(`insertId ${insertId} is not an exact integer`);
  }
  if (typeof insertId !== 'number' && typeof insertId !== 'string' && typeof insertId !== 'bigint') {
    throw new TypeError(`insertId has type ${typeof insertId}, expected a number or string`);
  }
  const text = String(insertId);
  if (!/^-?[0-9]+$/.test(text)) throw new RangeError(`insertId ${text} is not an integer`);
  let ticket = BigInt(text);
  // mysql2 reads the OK packet's insertId as a signed 64-bit value, so BIGINT UNSIGNED tickets of
  // 2^63 and above arrive negative; the same 64 bits read unsigned are the value plus 2^64.
  if (ticket < 0n && ticket >= -(1n << 63n)) ticket += 1n << 64n;
  if (ticket <= 0n || ticket > MAX_UINT64) throw new RangeError(`insertId ${text} is not a positive ticket`);
  return ticket;
}

/** The lowest ticket whose whole block lies above startAfter. */
export function firstUsefulTicket(settings: BlockSettings): bigint {
  return settings.startAfter / settings.blockSize + 1n;
}

/** Maps a ticket to the IDs it owns, clipped to (startAfter, maxId]. */
export function blockForTicket(ticket: bigint, settings: BlockSettings): BlockOutcome {
  const first = ticket * settings.blockSize;
  const last = first + settings.blockSize - 1n;
  if (first > settings.maxId) return { kind: 'exhausted' };
  if (last <= settings.startAfter) return { kind: 'below-start' };
  return {
    kind: 'range',
    range: {
      first: first > settings.startAfter ? first : settings.startAfter + 1n,
      last: last < settings.maxId ? last : settings.maxId,
    },
  };
}

/** True when the ticket lies in the backend's residue class. */
export function ownsTicket(ticket: bigint, stripe: Stripe): boolean {
  // MySQL yields offset ≡ ticket (mod increment); offset == increment is residue 0.
  return ticket % stripe.increment === stripe.offset % stripe.increment;
}

/** A residue class as stored with claims: tickets t with t ≡ residue (mod increment). */
export interface ResidueClass {
  readonly increment: bigint;
  readonly residue: bigint;
}

/**
 * True when some ticket can lie in both the class and the stripe's class: r ≡ r' (mod gcd of the
 * increments). Classes written under another increment (before a re-striping) count when they overlap.
 */
export function classesOverlap(cls: ResidueClass, stripe: Stripe): boolean {
  const g = gcd(cls.increment, stripe.increment);
  return (stripe.offset % stripe.increment) % g === cls.residue % g;
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}
