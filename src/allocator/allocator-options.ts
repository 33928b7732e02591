/** What an allocator is built from: its backends, its dependencies and its policies. */
import type { ConnectionGuard } from '../backend/mysql/backend.js';
import type { BackendOptions } from '../backend/backend-options.js';
import type { BackendAddress } from '../backend/backend-address.js';
import type { TicketBackend } from '../backend/ticket-backend.js';
import type { ClaimsPolicy } from '../core/claims.js';
import type { RegressionPolicy } from '../core/counters.js';
import type { BreakerOptions } from './breaker.js';
import type { Clock, Random } from '../core/clock.js';
import type { AllocatorEvents } from './events.js';
import type { ReturnEvents } from './range-returns.js';
import type { Logger } from '../logger.js';

/** Makes the backend for an address (tests pass fakes). */
export type BackendFactory = (
  address: BackendAddress,
  guard: ConnectionGuard,
  admin: BackendAddress | undefined,
) => TicketBackend;

/** Dependencies and policies of the allocator. */
export interface AllocatorOptions {
  readonly backends: readonly BackendAddress[];
  /** Accounts for schema and counter changes, one per backend in the same order (optional). */
  readonly adminBackends?: readonly BackendAddress[];
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly random?: Random;
  readonly backendOptions?: BackendOptions;
  readonly breakerOptions?: BreakerOptions;
  /** Demos only: accept backends without crash-safe durability settings (logs a warning). */
  readonly allowUnsafeDurability?: boolean;
  readonly regressionPolicy?: RegressionPolicy;
  /** When no peer takes a claim: serve on the process marks (`preferred`, default) or refuse. */
  readonly claimsPolicy?: ClaimsPolicy;
  /** Claims kept per sequence, residue class and peer before older ones are pruned to a floor. */
  readonly claimsKept?: number;
  readonly idleRevalidateMs?: number;
  /** Where fetches, failovers, regressions and unclaimed tickets are reported (metrics). */
  readonly events?: AllocatorEvents;
  /** Told how many IDs are given back, reused and lost (onReturned, onReclaimed: accounting); default: nowhere. */
  readonly returnEvents?: ReturnEvents;
  /** Makes each backend; default: a MySQL `Backend`. */
  readonly connect?: BackendFactory;
}
