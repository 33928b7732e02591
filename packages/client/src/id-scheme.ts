/**
 * What ticketd and its client must agree on about opaque IDs: the one place both take these from
 * (the server through the package's public exports).
 */
import { OpaqueIdError } from './errors.js';

/**
 * The permutation schemes, by the name stored beside each key. A sequence's scheme never changes
 * (its IDs would map to others); new schemes only ever come for new sequences. `tag` is written
 * into every AES block, so the round functions of two schemes never coincide.
 */
export const PERMUTATION_SCHEMES = Object.freeze({
  /** ticketd 0.4: 8 Feistel rounds (FF3-1's count). Kept, exactly, for the sequences made with it. */
  'feistel-aes256-v1': Object.freeze({ rounds: 8, tag: 0 }),
  /** From ticketd 0.5: 10 rounds, FF1's count. */
  'feistel-aes256-v2': Object.freeze({ rounds: 10, tag: 2 }),
});

/** The name of a scheme this package can apply. */
export type PermutationScheme = keyof typeof PERMUTATION_SCHEMES;

/** The scheme of sequences created from now on. */
export const PERMUTATION_SCHEME: PermutationScheme = 'feistel-aes256-v2';
/** The scheme of ticketd 0.4's sequences, whose key clients of 0.4 read from `key`. */
export const FIRST_PERMUTATION_SCHEME: PermutationScheme = 'feistel-aes256-v1';
/** Bytes of a sequence key. */
export const KEY_BYTES = 32;
/** Fewest IDs in an opaque sequence's domain: SP 800-38G Rev. 1's minimum domain size. */
export const MIN_OPAQUE_DOMAIN = 1_000_000n;

/** True for a scheme this package knows. */
export function isPermutationScheme(name: unknown): name is PermutationScheme {
  return typeof name === 'string' && Object.hasOwn(PERMUTATION_SCHEMES, name);
}

/** The scheme of that name; throws OpaqueIdError for one this package does not know. */
export function permutationScheme(name: unknown): PermutationScheme {
  if (isPermutationScheme(name)) return name;
  throw new OpaqueIdError(
    `opaque ID scheme ${JSON.stringify(name)} is unknown to this version (it knows ${Object.keys(PERMUTATION_SCHEMES).join(', ')}); upgrade ticketd-client`,
  );
}
