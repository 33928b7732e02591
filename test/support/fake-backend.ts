/**
 * An in-memory ticket server for unit tests of the allocator, the ticket guard and rejoin: a
 * counter per sequence striped like auto_increment, claims with their unique key and floors, and
 * switches for what real servers do wrong (go down, go back, change stripe).
 */
import type { BackendAddress } from '../../src/backend/backend-address.js';
import type { ConnectionGuard } from '../../src/backend/mysql/backend.js';
import type { Claim, ClassClaims, TicketBackend, TicketBatch } from '../../src/backend/ticket-backend.js';
import { sameSettings, type SequenceSettings } from '../../src/core/sequence.js';
import type { ServerSettings, Stripe } from '../../src/core/stripes.js';
import { SequenceConflictError, TicketClaimedBeforeError } from '../../src/core/errors.js';

interface StoredClaim {
  readonly increment: bigint;
  readonly residue: bigint;
}

/**
 * A fake server. Each allocator reaches it through its own `connect()` handle, whose connection
 * guard runs as on a real server's new connection.
 */
export class FakeServer {
  readonly label: string;
  stripe: Stripe;
  identity = 'fake-identity';
  /** When set, every call rejects with it (a dead or unreachable server). */
  down: Error | undefined;
  /** When set, reading claims and counters rejects with it (a peer too slow to answer a rejoin). */
  readError: Error | undefined;
  /** When set, advancing a counter rejects with it (an advance the server refuses). */
  advanceError: Error | undefined;
  readonly sequences = new Map<string, SequenceSettings>();
  /** Last ticket issued per sequence (0: none). */
  readonly last = new Map<string, bigint>();
  /** Next ticket will be at least this (ALTER TABLE … AUTO_INCREMENT). */
  readonly floorOfCounter = new Map<string, bigint>();
  readonly claims = new Map<string, Map<bigint, StoredClaim>>();
  readonly floors = new Map<string, (StoredClaim & { floor: bigint })[]>();
  /** Milliseconds each createSequence takes before its row lands (to interleave concurrent creators). */
  createDelayMs: () => number = () => 0;
  /** How many REPLACEs ran, per sequence. */
  readonly replaces = new Map<string, number>();

  constructor(label: string, stripe: Stripe) {
    this.label = label;
    this.stripe = stripe;
  }

  /** A handle for one allocator: its guard checks the server's settings before first use. */
  connect(guard: ConnectionGuard): TicketBackend {
    const server = this;
    let checked = false;
    const enter = (): void => {
      server.#enter();
      if (!checked) {
        guard(handle, server.#serverSettings());
        checked = true;
      }
    };
    const handle: TicketBackend = {
      label: server.label,
      transport: { tls: false },
      reloadTls: () => undefined,
      settings: async () => {
        checked = false;
        enter();
        return server.#serverSettings();
      },
      forgetVerifiedConnections: () => {
        checked = false;
      },
      fetchTickets: async (sequence, count) => {
        try {
          enter();
        } catch (error) {
          return { tickets: [], error };
        }
        return server.fetchTickets(sequence, count);
      },
      claimTickets: async (claim) => (enter(), server.claimTickets(claim)),
      readClaims: async (sequence) => (enter(), server.readClaims(sequence)),
      readClaimHistory: async () => (enter(), []),
      addFloor: async () => enter(),
      pruneClaims: async (sequence, stripe, keep) => (enter(), server.pruneClaims(sequence, stripe, keep)),
      lastTicket: async (sequence) => (enter(), server.lastTicket(sequence)),
      nextTicket: async (sequence) => (enter(), server.nextTicket(sequence)),
      advanceCounter: async (sequence, min) => (enter(), server.advanceCounter(sequence, min)),
      servingDenials: () => (enter(), Promise.resolve([])),
      readSequence: async (name) => (enter(), server.readSequence(name)),
      readSequences: async () => (enter(), server.readSequences()),
      createSequence: async (settings, first) => (enter(), server.createSequence(settings, first)),
      widenSequence: async () => {
        throw new Error('the fake backend does not widen sequences');
      },
      retireSequence: async () => {
        throw new Error('the fake backend does not retire sequences');
      },
      prepareSequence: async (name, first) => (enter(), server.prepareSequence(name, first)),
      applySchema: async () => (enter(), { identity: server.identity, gated: [] }),
      restoreFromDump: () => Promise.reject(new Error('the fake backend restores no dump')),
      recordCeiling: () => Promise.reject(new Error('the fake backend keeps no ceilings')),
      liftCeiling: () => Promise.reject(new Error('the fake backend keeps no ceilings')),
      readCeiling: () => Promise.resolve(undefined),
      inspect: async () => {
        server.#enter();
        return {
          settings: server.#serverSettings(),
          sequences: await server.readSequences(),
          engines: new Map(),
          missingTables: [],
          newestClaimAgeMs: undefined,
          transport: { tls: false },
          tls: { mode: 'DISABLED', host: server.label, described: 'ssl-mode=DISABLED' },
          privileges: [],
          workerPools: 0,
          sharedSchemas: [],
        };
      },
      // The allocator's fakes serve tickets only: worker pools are tested on real servers.
      workers: {
        createPool: () => Promise.reject(new Error('fake backend: no worker pools')),
        readPools: () => Promise.reject(new Error('fake backend: no worker pools')),
        readRecords: () => Promise.reject(new Error('fake backend: no worker pools')),
        readRecord: () => Promise.reject(new Error('fake backend: no worker pools')),
        change: () => Promise.reject(new Error('fake backend: no worker pools')),
        fencePool: () => Promise.reject(new Error('fake backend: no worker pools')),
      },
      // Strict sequences' leases likewise.
      strict: {
        read: () => Promise.reject(new Error('fake backend: no strict sequences')),
        take: () => Promise.reject(new Error('fake backend: no strict sequences')),
        extend: () => Promise.reject(new Error('fake backend: no strict sequences')),
        resign: () => Promise.reject(new Error('fake backend: no strict sequences')),
      },
      returns: {
        record: () => Promise.reject(new Error('fake backend: no returned ranges')),
        list: async () => [],
        take: () => Promise.reject(new Error('fake backend: no returned ranges')),
        claim: () => Promise.reject(new Error('fake backend: no returned ranges')),
        dropAll: async () => 0,
        leaseSecret: async (fresh) => fresh(),
      },
      close: async () => undefined,
    };
    return handle;
  }

  /** The counter goes back so that the next ticket follows `lastTicket` (a restore, a promoted replica). */
  regress(sequence: string, lastTicket: bigint): void {
    this.last.set(sequence, lastTicket);
    this.floorOfCounter.delete(sequence);
  }

  #enter(): void {
    if (this.down !== undefined) throw this.down;
  }

  #serverSettings(): ServerSettings {
    return {
      ...this.stripe,
      flushLogAtTrxCommit: 1,
      syncBinlog: 1,
      logBin: false,
      galeraAutoIncrementControl: false,
      identity: this.identity,
    };
  }

  async fetchTickets(sequence: string, count: number): Promise<TicketBatch> {
    const tickets: bigint[] = [];
    try {
      this.#enter();
      for (let i = 0; i < count; i++) tickets.push(this.#next(sequence));
      return { tickets, error: undefined };
    } catch (error) {
      return { tickets, error };
    }
  }

  #next(sequence: string): bigint {
    const { increment, offset } = this.stripe;
    let t = (this.last.get(sequence) ?? 0n) + 1n;
    t = maxOf(t, this.floorOfCounter.get(sequence) ?? 1n);
    // auto_increment: the next value ≡ offset (mod increment).
    while (t % increment !== offset % increment) t++;
    this.last.set(sequence, t);
    this.replaces.set(sequence, (this.replaces.get(sequence) ?? 0) + 1);
    return t;
  }

  async claimTickets(claim: Claim): Promise<ClassClaims[]> {
    this.#enter();
    const table = this.claims.get(claim.sequence) ?? new Map<bigint, StoredClaim>();
    this.claims.set(claim.sequence, table);
    if (claim.tickets.some((t) => table.has(t)))
      throw new TicketClaimedBeforeError(`fake ${this.label}: duplicate claim`, 'duplicate');
    const cls = { increment: claim.stripe.increment, residue: claim.stripe.offset % claim.stripe.increment };
    for (const t of claim.tickets) table.set(t, cls);
    return (this.floors.get(claim.sequence) ?? []).map((f) => ({
      increment: f.increment,
      residue: f.residue,
      highest: undefined,
      floor: f.floor,
    }));
  }

  async readClaims(sequence: string): Promise<ClassClaims[]> {
    this.#enter();
    if (this.readError !== undefined) throw this.readError;
    const byClass = new Map<
      string,
      { increment: bigint; residue: bigint; highest: bigint | undefined; floor: bigint | undefined }
    >();
    const entry = (c: StoredClaim) => {
      const key = `${c.increment}/${c.residue}`;
      const known = byClass.get(key) ?? { ...c, highest: undefined, floor: undefined };
      byClass.set(key, known);
      return known;
    };
    for (const [t, c] of this.claims.get(sequence) ?? []) {
      const e = entry(c);
      e.highest = e.highest === undefined ? t : maxOf(e.highest, t);
    }
    for (const f of this.floors.get(sequence) ?? []) {
      const e = entry(f);
      e.floor = e.floor === undefined ? f.floor : maxOf(e.floor, f.floor);
    }
    return [...byClass.values()];
  }

  async pruneClaims(sequence: string, stripe: Stripe, keep: number): Promise<bigint | undefined> {
    this.#enter();
    const residue = stripe.offset % stripe.increment;
    const table = this.claims.get(sequence) ?? new Map<bigint, StoredClaim>();
    const mine = [...table]
      .filter(([, c]) => c.increment === stripe.increment && c.residue === residue)
      .map(([t]) => t);
    mine.sort((a, b) => (a > b ? -1 : 1));
    const floor = mine[keep];
    if (floor === undefined) return undefined;
    this.floors.set(sequence, [...(this.floors.get(sequence) ?? []), { increment: stripe.increment, residue, floor }]);
    for (const t of mine) if (t <= floor) table.delete(t);
    return floor;
  }

  async lastTicket(sequence: string): Promise<bigint> {
    this.#enter();
    return this.last.get(sequence) ?? 0n;
  }

  async nextTicket(sequence: string): Promise<bigint> {
    this.#enter();
    if (this.readError !== undefined) throw this.readError;
    return maxOf((this.last.get(sequence) ?? 0n) + 1n, this.floorOfCounter.get(sequence) ?? 1n);
  }

  async advanceCounter(sequence: string, minTicket: bigint): Promise<void> {
    this.#enter();
    if (this.advanceError !== undefined) throw this.advanceError;
    this.floorOfCounter.set(sequence, maxOf(this.floorOfCounter.get(sequence) ?? 1n, minTicket));
  }

  async readSequence(name: string): Promise<SequenceSettings | undefined> {
    this.#enter();
    return this.sequences.get(name);
  }

  async readSequences(): Promise<SequenceSettings[]> {
    this.#enter();
    return [...this.sequences.values()];
  }

  async createSequence(settings: SequenceSettings, firstTicket: bigint): Promise<boolean> {
    this.#enter();
    const existing = this.sequences.get(settings.name);
    if (existing !== undefined) {
      if (!sameSettings(existing, settings))
        throw new SequenceConflictError(`fake ${this.label}: ${settings.name} differs`);
      return false;
    }
    await this.prepareSequence(settings.name, firstTicket);
    await new Promise((done) => setTimeout(done, this.createDelayMs()));
    // The row's INSERT is atomic: one that lost a race finds the winner's row, as on MySQL.
    const raced = this.sequences.get(settings.name);
    if (raced !== undefined) {
      if (!sameSettings(raced, settings))
        throw new SequenceConflictError(`fake ${this.label}: ${settings.name} differs`);
      return false;
    }
    this.sequences.set(settings.name, settings);
    return true;
  }

  async prepareSequence(name: string, firstTicket: bigint): Promise<void> {
    await this.advanceCounter(name, firstTicket);
  }
}

/** Fake servers striped 1..n of increment n, their addresses, and the factory an Allocator takes. */
export function fakeServers(n = 2): {
  servers: FakeServer[];
  addresses: BackendAddress[];
  connect: (address: BackendAddress, guard: ConnectionGuard) => TicketBackend;
} {
  const servers = Array.from(
    { length: n },
    (_, i) =>
      new FakeServer(`mysql://fake-${String.fromCharCode(97 + i)}:3306/t`, {
        increment: BigInt(n),
        offset: BigInt(i + 1),
      }),
  );
  const byLabel = new Map(servers.map((f) => [f.label, f]));
  const addresses = servers.map((f) => ({
    host: f.label,
    port: 3306,
    user: 'root',
    password: '',
    database: 't',
    label: f.label,
    tls: { mode: 'DISABLED' as const },
  }));
  return { servers, addresses, connect: (address, guard) => byLabel.get(address.label)!.connect(guard) };
}

function maxOf(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
