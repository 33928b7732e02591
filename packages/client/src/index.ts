/** ticketd-client: lease blocks of IDs from ticketd and hand them out in-process. No dependencies. */
export { createTicketClient, type TicketClient, type TicketClientOptions } from './ticket-client.js';
export { fetchIdCodec, type CodecOptions, type IdCodec } from './id-codec.js';
export { LeaseFailedError, NoBufferedIdsError, OpaqueIdError, TicketClientError } from './errors.js';
export { IdPermutation, type IdDomain } from './id-permutation.js';
export {
  FIRST_PERMUTATION_SCHEME,
  isPermutationScheme,
  KEY_BYTES,
  MIN_OPAQUE_DOMAIN,
  PERMUTATION_SCHEME,
  PERMUTATION_SCHEMES,
  permutationScheme,
  type PermutationScheme,
} from './id-scheme.js';
