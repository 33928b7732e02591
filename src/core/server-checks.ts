/** Per-server settings that decide whether a backend's tickets can be trusted (invariants 1 and 2). */
import type { Stripe } from './ticket-math.js';

/** What a connection reports about its server and session. */
export interface ServerSettings extends Stripe {
  readonly flushLogAtTrxCommit: number;
  readonly syncBinlog: number;
  readonly logBin: boolean;
  /** Galera with wsrep_auto_increment_control, which rewrites increment and offset per node. */
  readonly galeraAutoIncrementControl: boolean;
  /** The identity `ticketd init` wrote, or undefined before init. */
  readonly identity: string | undefined;
}

/** Fatal problems refuse the backend; warnings are logged (unsafe durability allowed for demos). */
export interface ServerProblems {
  readonly fatal: string[];
  readonly warnings: string[];
}

/** Checks one server's own settings; cross-backend stripe checks are in stripes.ts. */
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
  if (s.galeraAutoIncrementControl) {
    fatal.push(`backend ${label} has wsrep_on=ON with wsrep_auto_increment_control=ON; Galera rewrites auto_increment_offset per node`);
  }
  return { fatal, warnings };
}
