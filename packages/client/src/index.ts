/** ticketd-client: lease blocks of IDs from ticketd and hand them out in-process. No dependencies. */
export { createTicketClient, type TicketClient, type TicketClientOptions } from './ticket-client.js';
export type { TicketClientEvent } from './give-back.js';
export { fetchIdCodec, type CodecOptions, type IdCodec } from './id-codec.js';
export {
  ClockMovedBackError,
  ClockSkewError,
  LeaseFailedError,
  NoBufferedIdsError,
  NoLeaseError,
  OpaqueIdError,
  SnowflakeLayoutError,
  StrictSequenceError,
  TicketClientError,
} from './errors.js';
export {
  createSnowflake,
  DEFAULT_MAX_STEP_BACK_MS,
  type Snowflake,
  type SnowflakeClock,
  type SnowflakeEvent,
  type SnowflakeOptions,
} from './snowflake.js';
export {
  DEFAULT_LAYOUT,
  DEFAULT_SNOWFLAKE_EPOCH_MS,
  type SnowflakeLayout,
  type SnowflakeParts,
} from './snowflake-layout.js';
export { IdPermutation, type IdDomain } from './id-permutation.js';
export type { TlsMaterial } from './requests.js';
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
