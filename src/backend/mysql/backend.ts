/** One MySQL ticket server, as the allocator uses it: the pieces of this folder behind TicketBackend. */
import type { ClassClaims } from '../../core/claims.js';
import type { ClaimHistory } from '../../core/fence.js';
import type { SequenceSettings } from '../../core/sequence.js';
import type { ResidueClass, ServerSettings, Stripe } from '../../core/stripes.js';
import type { BackendAddress } from '../backend-address.js';
import { describeTls } from '../backend-tls.js';
import type {
  Claim,
  Inspection,
  RestoreReport,
  SchemaApplied,
  SequenceCeiling,
  TicketBackend,
  TicketBatch,
  Transport,
} from '../ticket-backend.js';
import { restoreFromDump } from './restore-sql.js';
import { addFloor, claimTickets, newestClaimAgeMs, pruneClaims, readClaimHistory, readClaims } from './claim-sql.js';
import { DEFAULT_BACKEND_OPTIONS, type BackendOptions } from '../backend-options.js';
import { Pools } from './pool.js';
import { applySchema, missingSchemaTables, ticketTableEngines } from './schema.js';
import { createSequence, gateSequences, readSequences, retireSequence, widenSequence } from './sequence-sql.js';
import { liftCeiling, readCeiling, recordCeiling } from './ceiling-sql.js';
import { TicketSql } from './ticket-sql.js';
import { countWorkerPools, WorkerSql } from './worker-sql.js';
import { StrictSql } from './strict-sql.js';
import { ReturnedSql } from './returned-sql.js';
import { probePrivileges, servingDenials } from './privilege-probe.js';
import { sharedSchemas } from './shared-server.js';

/** Called for every new connection before it is used; throws to refuse the connection. */
export type ConnectionGuard = (backend: TicketBackend, settings: ServerSettings) => void;

/** A ticket server. Every connection is checked by the guard before its first use. */
export class Backend implements TicketBackend {
  readonly address: BackendAddress;
  readonly label: string;
  readonly #pools: Pools;
  readonly #tickets: TicketSql;
  readonly workers: WorkerSql;
  readonly strict: StrictSql;
  readonly returns: ReturnedSql;

  constructor(
    address: BackendAddress,
    guard: ConnectionGuard,
    options: BackendOptions = DEFAULT_BACKEND_OPTIONS,
    admin?: BackendAddress,
  ) {
    this.address = address;
    this.label = address.label;
    this.#pools = new Pools(address, (settings) => guard(this, settings), options, admin);
    this.#tickets = new TicketSql(this.#pools);
    this.workers = new WorkerSql(this.#pools);
    this.strict = new StrictSql(this.#pools);
    this.returns = new ReturnedSql(this.#pools);
  }

  get transport(): Transport | undefined {
    return this.#pools.transport;
  }

  reloadTls(): void {
    this.#pools.reloadTls();
  }

  fetchTickets(sequence: string, count: number): Promise<TicketBatch> {
    return this.#tickets.fetchTickets(sequence, count);
  }

  forgetVerifiedConnections(): void {
    this.#pools.forgetVerifiedConnections();
  }

  settings(): Promise<ServerSettings> {
    return this.#pools.withConnection((conn) => this.#pools.readSession(conn));
  }

  async inspect(): Promise<Inspection> {
    const db = this.#pools.unchecked();
    const settings = await db.withConnection((conn) => this.#pools.readSession(conn));
    const initialised = settings.identity !== undefined;
    const engines = await ticketTableEngines(db);
    return {
      settings,
      sequences: initialised ? await readSequences(db) : [],
      engines,
      missingTables: initialised ? await missingSchemaTables(db) : [],
      newestClaimAgeMs: initialised ? await newestClaimAgeMs(db).catch(() => undefined) : undefined,
      transport: this.#pools.transport ?? { tls: false },
      tls: { mode: this.address.tls.mode, host: this.address.host, described: describeTls(this.address.tls) },
      privileges: initialised
        ? await probePrivileges(db, [...engines.keys()].map((name) => `tickets_${name}`)[0], this.#pools.separateAdmin)
        : [],
      workerPools: initialised ? await countWorkerPools(db).catch(() => 0) : 0,
      sharedSchemas: await sharedSchemas(db).catch(() => []),
    };
  }

  async servingDenials(): Promise<readonly string[]> {
    const engines = await ticketTableEngines(this.#pools);
    return servingDenials(this.#pools, [...engines.keys()].map((name) => `tickets_${name}`)[0]);
  }

  async applySchema(): Promise<SchemaApplied> {
    const identity = await applySchema(this.#pools);
    return { identity, gated: await gateSequences(this.#pools, this.#tickets) };
  }

  async restoreFromDump(dump: string): Promise<RestoreReport> {
    const merged = await restoreFromDump(this.#pools, dump);
    // This version's tables, and the gating of sequences it must keep from older processes.
    await this.applySchema();
    // A ticket table the dump brought back for a sequence retired since: it must take no tickets either.
    const created = new Set(merged.tablesCreated);
    const retiredAgain = (await readSequences(this.#pools))
      .filter((s) => s.retired === true && created.has(`tickets_${s.name}`))
      .map((s) => s.name);
    for (const name of retiredAgain) await this.#tickets.retireTicketTable(name);
    return { ...merged, retiredAgain };
  }

  claimTickets(claim: Claim): Promise<ClassClaims[]> {
    return claimTickets(this.#pools, claim);
  }

  readClaims(sequence: string): Promise<ClassClaims[]> {
    return readClaims(this.#pools, sequence);
  }

  addFloor(sequence: string, cls: ResidueClass, floor: bigint): Promise<void> {
    return addFloor(this.#pools, sequence, cls, floor);
  }

  readClaimHistory(sequence: string): Promise<ClaimHistory[]> {
    return readClaimHistory(this.#pools, sequence);
  }

  pruneClaims(sequence: string, stripe: Stripe, keep: number): Promise<bigint | undefined> {
    return pruneClaims(this.#pools, sequence, stripe, keep);
  }

  readSequences(): Promise<SequenceSettings[]> {
    return readSequences(this.#pools);
  }

  async readSequence(name: string): Promise<SequenceSettings | undefined> {
    return (await readSequences(this.#pools, name))[0];
  }

  createSequence(settings: SequenceSettings, firstTicket: bigint): Promise<boolean> {
    return createSequence(this.#pools, this.#tickets, settings, firstTicket);
  }

  widenSequence(name: string, maxId: bigint): Promise<boolean> {
    return widenSequence(this.#pools, name, maxId);
  }

  recordCeiling(name: string, ceiling: bigint, reason: string): Promise<void> {
    return recordCeiling(this.#pools, name, ceiling, reason);
  }

  liftCeiling(name: string): Promise<boolean> {
    return liftCeiling(this.#pools, name);
  }

  readCeiling(name: string): Promise<SequenceCeiling | undefined> {
    return readCeiling(this.#pools, name);
  }

  retireSequence(settings: SequenceSettings): Promise<void> {
    return retireSequence(this.#pools, this.#tickets, settings);
  }

  prepareSequence(name: string, firstTicket: bigint): Promise<void> {
    return this.#tickets.prepareSequence(name, firstTicket);
  }

  advanceCounter(sequence: string, minTicket: bigint): Promise<void> {
    return this.#tickets.advanceCounter(sequence, minTicket);
  }

  lastTicket(sequence: string): Promise<bigint> {
    return this.#tickets.lastTicket(sequence);
  }

  nextTicket(sequence: string): Promise<bigint> {
    return this.#tickets.nextTicket(sequence);
  }

  close(): Promise<void> {
    return this.#pools.close();
  }
}
