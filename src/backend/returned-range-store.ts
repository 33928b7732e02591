/** What giving ranges back needs of a backend (core/returned-ranges.ts): returned rows, their claims, the lease secret. */
import type { ReturnedRange } from '../core/returned-ranges.js';

/** How a holder's take of a returned row went. */
export type TakeOutcome =
  /** Its claim is in and the row deleted, in one transaction. */
  | 'taken'
  /** Its key was claimed here before: the row can never be used (it was deleted). */
  | 'claimed-before'
  /** No such row any more (another process took it first). */
  | 'gone';

/** Returned ranges and their claims on one backend. */
export interface ReturnedRangeStore {
  /** Records a range given back; false when its key is here already (as a row, or as a claim: it was returned before). */
  record(range: ReturnedRange): Promise<boolean>;
  /** Up to `limit` rows of the sequence held here, lowest first. */
  list(sequence: string, limit: number): Promise<ReturnedRange[]>;
  /** The holder's step: in one transaction inserts the key's claim and deletes the row (exactly one, or nothing changes). */
  take(range: ReturnedRange): Promise<TakeOutcome>;
  /** A peer's step: inserts the key's claim; false when the key was claimed here before. */
  claim(range: ReturnedRange): Promise<boolean>;
  /** Deletes every returned row here (`ticketd fence`: a restored fleet may have lost their claims); returns how many. */
  dropAll(): Promise<number>;
  /** This backend's lease secret, made (32 random bytes from `fresh`) if it has none yet. */
  leaseSecret(fresh: () => Uint8Array): Promise<Uint8Array>;
}
