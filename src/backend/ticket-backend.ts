/**
 * What the allocator needs of a ticket server. `Backend` implements it on MySQL; unit tests pass
 * fakes, so the allocator, the ticket guard and rejoin are tested without a server.
 */
import type { SequenceSettings } from '../core/sequence.js';
import type { SslMode } from './backend-tls.js';
import type { ClassClaims } from '../core/claims.js';
import type { ClaimHistory } from '../core/fence.js';
import type { ResidueClass, ServerSettings, Stripe } from '../core/stripes.js';
import type { StrictStore } from './strict-store.js';
import type { WorkerLeaseStore } from './worker-lease-store.js';
import type { ReturnedRangeStore } from './returned-range-store.js';

export type { ClassClaims } from '../core/claims.js';

/** What a run of REPLACEs produced: the tickets it got, and the error that stopped it, if any. */
export interface TicketBatch {
  readonly tickets: bigint[];
  readonly error: unknown;
}

/** Tickets of one backend's residue class, to be claimed on a peer before their blocks are served. */
export interface Claim {
  readonly sequence: string;
  readonly stripe: Stripe;
  readonly tickets: readonly bigint[];
  /** Identity of the backend the tickets came from (for operators reading the table). */
  readonly source: string;
}

/** A statement a feature needs that an account was refused (backend/mysql/privilege-probe.ts). */
export interface PrivilegeProbe {
  readonly account: 'serving' | 'admin';
  readonly feature: 'issuing' | 'worker leases' | 'strict sequences' | 'schema changes';
  /** The privilege, as the docs name it. */
  readonly needs: string;
  /** The server's words. */
  readonly error: string;
}

/** A schema other than ticketd's on a backend's server, with its tables that have an AUTO_INCREMENT column. */
export interface SharedSchema {
  readonly name: string;
  readonly tables: number;
}

/** What a server reports of itself, for `ticketd check` and serve's start-up; nothing is judged here. */
export interface Inspection {
  readonly settings: ServerSettings;
  readonly sequences: readonly SequenceSettings[];
  /** Storage engine of every ticket table, by sequence name. */
  readonly engines: ReadonlyMap<string, string>;
  /** Tables of sql/schema.sql the backend lacks. */
  readonly missingTables: readonly string[];
  /** Milliseconds since the newest claim it holds, by its own clock; undefined when it holds none. */
  readonly newestClaimAgeMs: number | undefined;
  /** How the inspecting connection travelled, and the TLS settings it was made with. */
  readonly transport: Transport;
  readonly tls: { readonly mode: SslMode; readonly host: string; readonly described: string };
  /** What each account was refused of what the features need (empty before init). */
  readonly privileges: readonly PrivilegeProbe[];
  /** Worker pools created on it: whether worker leases are in use. */
  readonly workerPools: number;
  /** Other schemas on the same server with AUTO_INCREMENT tables (as far as the account sees). */
  readonly sharedSchemas: readonly SharedSchema[];
}

/** What `applySchema` did on one backend. */
export interface SchemaApplied {
  readonly identity: string;
  /** Sequences stored gated by this call (they were readable by ticketd 0.5 and older). */
  readonly gated: readonly string[];
}

/** The largest maxId a sequence may ever reach, and why (a migrated sequence's legacy reserve lies above it). */
export interface SequenceCeiling {
  readonly ceiling: bigint;
  readonly reason: string;
}

/** What `backends restore` did on one backend: only additions (backend/mysql/restore-sql.ts). */
export interface RestoreReport {
  /** Statements of the dump loaded into the staging database. */
  readonly statements: number;
  /** Kinds of statement left out because they would reach past the staging database (`USE`, `CREATE DATABASE`…). */
  readonly leftOut: readonly string[];
  /** Tables the live database lacked, created from the dump's. */
  readonly tablesCreated: readonly string[];
  /** Ticket counters the dump held higher than the live ones, raised to the dump's. */
  readonly countersRaised: readonly { readonly sequence: string; readonly from: bigint; readonly to: bigint }[];
  /** Rows the live tables lacked, inserted from the dump. */
  readonly rowsAdded: readonly { readonly table: string; readonly rows: number }[];
  /** Tables in the dump that are not ticketd's, left alone. */
  readonly tablesLeftOut: readonly string[];
  /** Retired sequences whose ticket tables the restore created, retired again. */
  readonly retiredAgain: readonly string[];
}

/** How a backend's connections travel: TLS (its version and cipher) or plaintext. */
export type Transport =
  { readonly tls: true; readonly version: string; readonly cipher: string } | { readonly tls: false };

/** A ticket server as the allocator uses it. */
export interface TicketBackend {
  /** `mysql://host:port/db`: safe to log. */
  readonly label: string;
  /** How its newest connection travels; undefined before any connected. */
  readonly transport: Transport | undefined;
  /** Reads its TLS files again for new connections (SIGHUP); throws, keeping the old ones, when one cannot be read. */
  reloadTls(): void;
  /** Connects (a fresh check of the server's settings) and returns what it reports. */
  settings(): Promise<ServerSettings>;
  /** Checks the settings of every connection again before its next use (after an idle spell or a break). */
  forgetVerifiedConnections(): void;
  /** Runs REPLACE `count` times in a row; at most one run per sequence in flight. */
  fetchTickets(sequence: string, count: number): Promise<TicketBatch>;
  /**
   * Claims tickets durably in one statement, then reads and returns the sequence's floors (every
   * class, `highest` unset). Rejects with TicketClaimedBeforeError when one was claimed before.
   */
  claimTickets(claim: Claim): Promise<ClassClaims[]>;
  /** Highest claim and floor per residue class of a sequence. */
  readClaims(sequence: string): Promise<ClassClaims[]>;
  /** Adds a claim floor for a residue class: every ticket of it at or below is refused from now on (a backend leaving). */
  addFloor(sequence: string, cls: ResidueClass, floor: bigint): Promise<void>;
  /** The kept claims of a sequence per residue class, with their times (fence). */
  readClaimHistory(sequence: string): Promise<ClaimHistory[]>;
  /** Keeps the newest `keep` claims of the stripe's class; returns the new floor, if it pruned. */
  pruneClaims(sequence: string, stripe: Stripe, keep: number): Promise<bigint | undefined>;
  /** The last ticket issued for the sequence (0 when none). */
  lastTicket(sequence: string): Promise<bigint>;
  /**
   * The lowest ticket the counter can issue next: its AUTO_INCREMENT, which (unlike the last ticket)
   * also moves when the counter is advanced, and is known for an empty table.
   */
  nextTicket(sequence: string): Promise<bigint>;
  /** What the serving account is refused now of what serving needs (empty: nothing); changes nothing. */
  servingDenials(): Promise<readonly string[]>;
  /** Advances the sequence's counter so the next ticket is ≥ minTicket, with the serving account's INSERT and DELETE. Never lowers it. */
  advanceCounter(sequence: string, minTicket: bigint): Promise<void>;
  /** One sequence row, or undefined when this backend lacks the sequence. */
  readSequence(name: string): Promise<SequenceSettings | undefined>;
  /** All sequence rows on this backend. */
  readSequences(): Promise<SequenceSettings[]>;
  /** Creates the sequence here; false when an identical one exists; throws on a conflicting one. */
  createSequence(settings: SequenceSettings, firstTicket: bigint): Promise<boolean>;
  /** Raises an ordered sequence's maxId to `maxId` (never lowers it); true when this backend's row changed. */
  widenSequence(name: string, maxId: bigint): Promise<boolean>;
  /** Records the largest maxId the sequence may ever reach (only ever lowers a recorded one). */
  recordCeiling(name: string, ceiling: bigint, reason: string): Promise<void>;
  /** Lifts the sequence's ceiling; true when there was one. */
  liftCeiling(name: string): Promise<boolean>;
  /** The sequence's ceiling here, if one was recorded. */
  readCeiling(name: string): Promise<SequenceCeiling | undefined>;
  /** Retires the sequence here for good: its ticket table takes no more tickets from any ticketd. Idempotent. */
  retireSequence(settings: SequenceSettings): Promise<void>;
  /** Creates the ticket table and advances its counter to firstTicket, without the sequence row (migrations). */
  prepareSequence(name: string, firstTicket: bigint): Promise<void>;
  /**
   * Reads what the server reports (settings, sequences, engines, schema) on a connection the guard
   * does not check: it only reports, for the checks to judge; nothing is fetched or served on it.
   */
  inspect(): Promise<Inspection>;
  /**
   * Applies the schema, writes this backend's identity if it has none, and stores every sequence that
   * older ticketd must not serve gated (core/versions.ts); returns the identity and the names gated now.
   */
  applySchema(): Promise<SchemaApplied>;
  /**
   * Restores a logical dump through a staging database, merging it into the live one by additions
   * only (a missing table or row, a counter raised, never lowered); idempotent.
   */
  restoreFromDump(dump: string): Promise<RestoreReport>;
  /** Snowflake worker pools and their leases on this backend. */
  readonly workers: WorkerLeaseStore;
  /** Strict sequences' lease rows on this backend. */
  readonly strict: StrictStore;
  /** Ranges given back, their claims and the lease secret on this backend. */
  readonly returns: ReturnedRangeStore;
  /** Closes every connection. */
  close(): Promise<void>;
}
