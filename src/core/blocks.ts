/**
 * Tickets and the IDs they own (invariant 1 of lane.ts): ticket t owns the block
 * [t·B, t·B + B − 1], clipped to (startAfter, maxId]. Blocks of different tickets never overlap,
 * so no ID is issued twice as long as no ticket's block is served twice.
 */

/** Largest value a BIGINT UNSIGNED column (and so any ticketd ID) can hold: 2^64 − 1. */
export const MAX_UINT64 = (1n << 64n) - 1n;
/**
 * maxId of a sequence created without one: 2^63 − 1, the limit of a signed BIGINT, a Java `long` and
 * a Go `int64`, where most teams keep IDs. An opaque sequence's IDs spread over its whole domain, so
 * with 2^64 − 1 half of them would not fit; and its maxId can never change.
 */
export const DEFAULT_MAX_ID = (1n << 63n) - 1n;
/** The default maxId of ticketd 0.10 and earlier: sequences created then keep it, and a request without maxId matches it. */
export const LEGACY_DEFAULT_MAX_ID = MAX_UINT64;

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
  /**
   * How many times these IDs were given back and reused (core/returned-ranges.ts): absent (0) for a
   * fresh ticket's block; a range cut from it and given back is one more.
   */
  readonly generation?: number;
}

/** What one ticket is worth for a sequence. */
export type BlockOutcome =
  | { readonly kind: 'range'; readonly range: IdRange }
  | { readonly kind: 'below-start' }
  | { readonly kind: 'exhausted' };

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

/** The ticket whose block holds an ordered ID: the inverse of blockForTicket (decode and migrate verify). */
export function ticketOfId(orderedId: bigint, settings: Pick<BlockSettings, 'blockSize'>): bigint {
  return orderedId / settings.blockSize;
}
