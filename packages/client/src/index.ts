/** ticketd-client: lease blocks of IDs from ticketd and hand them out in-process. No dependencies. */
export { createTicketClient, fetchIdCodec, type IdCodec, type TicketClient, type TicketClientOptions } from './ticket-client.js';
export { LeaseFailedError, NoBufferedIdsError, OpaqueIdError, TicketClientError } from './errors.js';
export { FEISTEL_ROUNDS, IdPermutation, type IdDomain } from './id-permutation.js';
export { KEY_BYTES, MIN_OPAQUE_DOMAIN, PERMUTATION_SCHEME } from './id-scheme.js';
