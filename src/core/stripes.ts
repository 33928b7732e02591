/**
 * Residue classes and the server settings that keep them disjoint (invariants 2 and 3 of
 * lane.ts): every backend has the same increment and a distinct offset ≤ increment, and its
 * server is crash-safe, checked on every new connection.
 */

/** The residue class a backend owns: tickets t with t ≡ offset (mod increment). */
export interface Stripe {
  readonly increment: bigint;
  readonly offset: bigint;
}

/** A residue class as stored with claims: tickets t with t ≡ residue (mod increment). */
export interface ResidueClass {
  readonly increment: bigint;
  readonly residue: bigint;
}

/** What a connection reports about its server and session. */
export interface ServerSettings extends Stripe {
  readonly flushLogAtTrxCommit: number;
  readonly syncBinlog: number;
  readonly logBin: boolean;
  /** Galera with wsrep_auto_increment_control, which rewrites increment and offset per node. */
  readonly galeraAutoIncrementControl: boolean;
  /** A Galera node (wsrep_on): one node of a cluster may be one backend (docs/operating.md, "Topologies"). */
  readonly galera?: boolean;
  /** This member's role in a running Group Replication group; undefined outside one. */
  readonly groupReplication?: 'primary' | 'secondary' | 'multi-primary' | undefined;
  /** read_only or super_read_only: a replica or a secondary, where no ticket can be taken. */
  readonly readOnly?: boolean;
  /** TiDB, whose AUTO_INCREMENT values come in batches per TiDB server, not in order. */
  readonly tidb?: boolean;
  /** The identity `ticketd init` wrote, or undefined before init. */
  readonly identity: string | undefined;
  /** The oldest ticketd that may use the backend (ticketd_schema), or undefined before a 0.6 init. */
  readonly needsVersion?: string | undefined;
}

/** Fatal problems refuse the backend; warnings are logged (unsafe durability allowed for demos). */
export interface ServerProblems {
  readonly fatal: string[];
  readonly warnings: string[];
}

/** True when the ticket lies in the backend's residue class. */
export function ownsTicket(ticket: bigint, stripe: Stripe): boolean {
  // MySQL yields offset ≡ ticket (mod increment); offset == increment is residue 0.
  return ticket % stripe.increment === stripe.offset % stripe.increment;
}

/** The residue a stripe's tickets have. */
export function residueOf(stripe: Stripe): bigint {
  return stripe.offset % stripe.increment;
}

/**
 * True when some ticket can lie in both the class and the stripe's class: r ≡ r' (mod gcd of the
 * increments). Classes written under another increment (before a re-striping) count when they overlap.
 */
export function classesOverlap(cls: ResidueClass, stripe: Stripe): boolean {
  const g = gcd(cls.increment, stripe.increment);
  return residueOf(stripe) % g === cls.residue % g;
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/**
 * Returns why `candidate` (the settings a connection to backend `label` reports) cannot join the
 * backends already pinned, or undefined when it can. `backendCount` is how many are configured.
 * Classes must be pairwise disjoint; they share an increment except while the fleet is re-striped
 * (docs/operating.md, "Growing and shrinking the fleet"), when a backend may move into a narrower
 * class inside the one it had (2/1 → 4/1), never into a wider or another one.
 */
export function stripeProblem(
  label: string,
  candidate: Stripe,
  pinned: ReadonlyMap<string, Stripe>,
  backendCount: number,
): string | undefined {
  const { increment, offset } = candidate;
  if (offset > increment) {
    // MySQL silently ignores an offset above the increment and behaves as if it were 1.
    return `backend ${label} has auto_increment_offset=${offset} > auto_increment_increment=${increment}`;
  }
  if (increment < BigInt(backendCount)) {
    return `backend ${label} has auto_increment_increment=${increment}, smaller than the ${backendCount} backends configured`;
  }
  const own = pinned.get(label);
  if (own !== undefined && !isWithin(candidate, own)) {
    return `backend ${label} now has auto_increment_increment=${increment}, auto_increment_offset=${offset}; it had ${own.increment}/${own.offset}`;
  }
  for (const [other, stripe] of pinned) {
    if (other === label || !classesOverlap({ increment: stripe.increment, residue: residueOf(stripe) }, candidate))
      continue;
    return stripe.increment === increment
      ? `backend ${label} has auto_increment_offset=${offset}, same as ${other}`
      : `backend ${label} has auto_increment_increment=${increment}, auto_increment_offset=${offset}, whose tickets overlap those of ${other} (${stripe.increment}/${stripe.offset})`;
  }
  return undefined;
}

/** The largest increment among the stripes (1 when there are none): one ticket moves a counter by at most this much. */
export function largestIncrement(stripes: readonly Stripe[]): bigint {
  return stripes.reduce((m, s) => (s.increment > m ? s.increment : m), 1n);
}

/** True when every ticket of `narrow`'s class lies in `wide`'s: the increment a multiple, the residue the same modulo the wider one. */
export function isWithin(narrow: Stripe, wide: Stripe): boolean {
  return narrow.increment % wide.increment === 0n && residueOf(narrow) % wide.increment === residueOf(wide);
}

/** Checks one server's own settings; the cross-backend checks are stripeProblem's. */
export function serverProblems(label: string, s: ServerSettings, allowUnsafeDurability: boolean): ServerProblems {
  const fatal: string[] = [];
  const warnings: string[] = [];
  const durability: string[] = [];
  if (s.flushLogAtTrxCommit !== 1) {
    durability.push(
      `backend ${label} has innodb_flush_log_at_trx_commit=${s.flushLogAtTrxCommit}; it must be 1, or a crash can hand acknowledged tickets out again`,
    );
  }
  if (s.syncBinlog !== 1) {
    durability.push(
      `backend ${label} has sync_binlog=${s.syncBinlog}; it must be 1 (binary log ${s.logBin ? 'on' : 'off now, but a restart can turn it on'})`,
    );
  }
  (allowUnsafeDurability ? warnings : fatal).push(...durability);
  fatal.push(...topologyProblems(label, s));
  return { fatal, warnings };
}

/** Clusters and products that rewrite the stripe or allocate out of order (docs/operating.md, "Topologies"). */
function topologyProblems(label: string, s: ServerSettings): string[] {
  const problems: string[] = [];
  if (s.galeraAutoIncrementControl) {
    problems.push(
      `backend ${label} has wsrep_on=ON with wsrep_auto_increment_control=ON; Galera rewrites auto_increment_offset per node`,
    );
  }
  if (s.groupReplication === 'multi-primary') {
    problems.push(
      `backend ${label} is a member of a multi-primary Group Replication group, which sets auto_increment_increment and offset per member; use single-primary mode and name the primary`,
    );
  } else if (s.groupReplication === 'secondary') {
    problems.push(`backend ${label} is a Group Replication secondary (read-only); name the group's primary`);
  } else if (s.readOnly === true) {
    problems.push(`backend ${label} has read_only=ON (a replica?); name the writable server`);
  }
  if (s.tidb === true) {
    problems.push(
      `backend ${label} is TiDB, which hands out AUTO_INCREMENT values in batches per TiDB server, not in order, so a counter that went back cannot be told apart; TiDB is not supported as a backend`,
    );
  }
  return problems;
}

/** What a new connection's settings mean for a backend: a problem that refuses it, warnings, and whether another server now answers. */
export interface ConnectionVerdict {
  readonly problem: string | undefined;
  readonly warnings: readonly string[];
  /** Another server (or a re-initialised one) answers at the address: every lane must be checked again. */
  readonly identityChanged: boolean;
}

/** Judges the settings a new connection to backend `label` reports, against the other backends' stripes. */
export function judgeConnection(
  label: string,
  settings: ServerSettings,
  context: {
    readonly pinned: ReadonlyMap<string, Stripe>;
    readonly backendCount: number;
    readonly allowUnsafeDurability: boolean;
    readonly knownIdentity: string | undefined;
  },
): ConnectionVerdict {
  const own = serverProblems(label, settings, context.allowUnsafeDurability);
  return {
    problem: stripeProblem(label, settings, context.pinned, context.backendCount) ?? own.fatal[0],
    warnings: own.warnings,
    identityChanged: context.knownIdentity !== undefined && settings.identity !== context.knownIdentity,
  };
}
