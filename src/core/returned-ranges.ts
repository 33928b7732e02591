/**
 * Giving unused IDs back (docs/uniqueness.md, "Giving ranges back"). A holder of a range (a front
 * end's cache, a client's leased block) that stops serving it may record its unused tail on one
 * backend; a later refill reuses it only after claiming its key on every backend. The key is
 * (sequence, last, generation): a tail cut from a range of generation g is generation g + 1, so two
 * returns of one range's tail (whatever their first IDs) share a key and at most one is reused,
 * while a reused range that is given back again gets a key of its own.
 */
import type { IdRange } from './blocks.js';
import type { IdMode } from './sequence.js';

/** A range given back: IDs first..last of a sequence, none of them handed out, with its generation. */
export interface ReturnedRange {
  readonly sequence: string;
  readonly first: bigint;
  readonly last: bigint;
  readonly generation: number;
}

/** The largest generation a range may have (the column is INT UNSIGNED): one that old is not given back again. */
export const MAX_GENERATION = 4_000_000_000;

/** How a returned range's key reads in logs and claims: sequence, last, generation. */
export function keyOf(range: ReturnedRange): string {
  return `${range.sequence}/${range.last}/g${range.generation}`;
}

/**
 * Whether a sequence's unused IDs may be given back and reused: opaque ones by default (their order
 * is hidden), ordered ones only when created with `reuse` (a reused range lies below IDs handed out
 * already: later IDs are no longer always larger), strict ones never (real-time order).
 */
export function reuseAllowed(settings: { readonly ids: IdMode; readonly reuse?: true }): boolean {
  if (settings.ids === 'strict') return false;
  return settings.ids === 'opaque' || settings.reuse === true;
}

/**
 * The tail from `from` of a held range, as the range to record: one generation more. Undefined when
 * `from` lies outside the range or the generation is spent.
 */
export function tailOf(sequence: string, held: IdRange, from: bigint): ReturnedRange | undefined {
  const generation = (held.generation ?? 0) + 1;
  if (from < held.first || from > held.last || generation > MAX_GENERATION) return undefined;
  return { sequence, first: from, last: held.last, generation };
}

/** The range a reused row stands for, as a cache holds it. */
export function asHeld(range: ReturnedRange): IdRange {
  return { first: range.first, last: range.last, generation: range.generation };
}

/** How many IDs a range holds. */
export function sizeOf(range: IdRange): bigint {
  return range.last - range.first + 1n;
}
