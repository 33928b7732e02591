/**
 * What ticketd and its client must agree on about opaque IDs: the one place both take these from
 * (the server through the package's public exports).
 */

/** Name of the construction, stored beside each key so another one can come later. */
export const PERMUTATION_SCHEME = 'feistel-aes256-v1';
/** Bytes of a sequence key. */
export const KEY_BYTES = 32;
/** Fewest IDs in an opaque sequence's domain: SP 800-38G Rev. 1's minimum domain size. */
export const MIN_OPAQUE_DOMAIN = 1_000_000n;
