/** What usage accounting needs of a backend: each front end's rows of figures (core/usage.ts). */
import type { StoredUsageRow, UsageRow } from '../core/usage.js';

/** The ticketd_usage rows of one backend. */
export interface UsageStore {
  /**
   * Creates ticketd_usage when this backend lacks it (a fleet initialised by an older ticketd), with
   * the account for schema changes; false when the table is missing and could not be created.
   */
  prepare(): Promise<boolean>;
  /** Inserts the instance's rows of flush `flush`, then deletes its rows of earlier flushes. */
  write(instance: string, flush: number, rows: readonly UsageRow[]): Promise<void>;
  /** Every row (of one sequence, when named), each with its age by this backend's clock. */
  read(sequence?: string): Promise<StoredUsageRow[]>;
}
