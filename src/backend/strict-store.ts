/** What a strict sequence's leader election needs of a backend: its lease row, changed only by compare-and-set. */
import type { StrictRow } from '../core/strict.js';

/** The outcome of asking one backend for an epoch: the row as it stood under its lock, and whether it took the epoch. */
export interface StrictTake {
  readonly won: boolean;
  readonly row: StrictRow;
}

/** A strict sequence's lease row on one backend. */
export interface StrictStore {
  /** The row with this backend's clock; undefined when this backend lacks it. */
  read(name: string): Promise<StrictRow | undefined>;
  /**
   * Under the row's lock (created, free at `startAfter`, when missing): gives `candidate` the epoch
   * when core/strict.ts mayTake allows, with a lease from now by this backend's clock.
   */
  take(name: string, epoch: bigint, candidate: string, url: string, startAfter: bigint): Promise<StrictTake>;
  /** Renews the lease and raises the bound to at least `bound`, only while this epoch and leader hold a live lease here. */
  extend(name: string, epoch: bigint, leader: string, bound: bigint): Promise<boolean>;
  /** Ends the lease now, if this epoch and leader still hold it (a leader that stops). */
  resign(name: string, epoch: bigint, leader: string): Promise<void>;
}
