import { serverProblems, type ServerSettings } from '../../src/core/stripes.js';

const good: ServerSettings = {
  increment: 2n,
  offset: 1n,
  flushLogAtTrxCommit: 1,
  syncBinlog: 1,
  logBin: false,
  galeraAutoIncrementControl: false,
  identity: 'id',
};

describe('serverProblems', () => {
  it('finds nothing on a crash-safe server', () => {
    expect(serverProblems('mysql://a/t', good, false)).toEqual({ fatal: [], warnings: [] });
  });

  it('refuses innodb_flush_log_at_trx_commit ≠ 1 and sync_binlog ≠ 1, naming backend and setting', () => {
    const { fatal } = serverProblems('mysql://a/t', { ...good, flushLogAtTrxCommit: 2, syncBinlog: 0 }, false);
    expect(fatal).toHaveLength(2);
    expect(fatal[0]).toMatch(/^backend mysql:\/\/a\/t has innodb_flush_log_at_trx_commit=2; it must be 1/);
    expect(fatal[1]).toMatch(/^backend mysql:\/\/a\/t has sync_binlog=0; it must be 1/);
  });

  it('turns durability problems into warnings with --allow-unsafe-durability', () => {
    const result = serverProblems('mysql://a/t', { ...good, flushLogAtTrxCommit: 0 }, true);
    expect(result.fatal).toEqual([]);
    expect(result.warnings).toHaveLength(1);
  });

  it('refuses Galera with auto-increment control, even with unsafe durability allowed', () => {
    const { fatal } = serverProblems('mysql://a/t', { ...good, galeraAutoIncrementControl: true }, true);
    expect(fatal).toEqual([
      'backend mysql://a/t has wsrep_on=ON with wsrep_auto_increment_control=ON; Galera rewrites auto_increment_offset per node',
    ]);
  });

  it('accepts one Galera node without auto-increment control, and a Group Replication primary in single-primary mode', () => {
    expect(serverProblems('mysql://a/t', { ...good, galera: true }, false).fatal).toEqual([]);
    expect(serverProblems('mysql://a/t', { ...good, groupReplication: 'primary' }, false).fatal).toEqual([]);
  });

  it('refuses a multi-primary Group Replication member, a secondary, a read-only server and TiDB, each in its own words', () => {
    const fatal = (over: Partial<ServerSettings>): string[] =>
      serverProblems('mysql://a/t', { ...good, ...over }, true).fatal;
    expect(fatal({ groupReplication: 'multi-primary' })).toEqual([
      'backend mysql://a/t is a member of a multi-primary Group Replication group, which sets auto_increment_increment and offset per member; use single-primary mode and name the primary',
    ]);
    expect(fatal({ groupReplication: 'secondary', readOnly: true })).toEqual([
      "backend mysql://a/t is a Group Replication secondary (read-only); name the group's primary",
    ]);
    expect(fatal({ readOnly: true })).toEqual([
      'backend mysql://a/t has read_only=ON (a replica?); name the writable server',
    ]);
    expect(fatal({ tidb: true })[0]).toMatch(
      /^backend mysql:\/\/a\/t is TiDB, which hands out AUTO_INCREMENT values in batches per TiDB server, not in order/,
    );
  });
});
