import type { LocalPair } from '../../src/launcher/local-pair.js';
import mysql, { type RowDataPacket } from 'mysql2/promise';
import { describeEachEngine } from '../support/engines.js';
import { runCli, sqlOn, startPrivatePair } from '../support/ticketd.js';

/**
 * Each misconfiguration is made on a running pair with SET GLOBAL (new sessions see it), checked,
 * then undone. Galera cannot run on this machine; its check is covered by test/unit/stripes.
 */
describeEachEngine('ticketd check and serve refuse misconfigured backends', (engine) => {
  let pair: LocalPair & { dispose(): Promise<void> };
  let env: Record<string, string>;

  beforeAll(async () => {
    pair = await startPrivatePair(engine.binary);
    env = { TICKETD_BACKENDS: pair.backendsUrl };
    expect(runCli(['sequences', 'create', 'engine_test', '--block-size', '10'], env).status).toBe(0);
  });

  afterAll(async () => {
    await pair?.dispose();
  });

  it('passes a correctly configured pair', () => {
    const result = runCli(['check'], env);
    expect(result.stdout).toMatch(/^ok: 2 backends checked$/m);
    expect(result.status).toBe(0);
  });

  const cases: { name: string; server: 'a' | 'b'; breaks: string[]; restores: string[]; expected: RegExp }[] = [
    {
      name: 'two backends with the same offset',
      server: 'b',
      breaks: ['SET GLOBAL auto_increment_offset = 1'],
      restores: ['SET GLOBAL auto_increment_offset = 2'],
      expected:
        /backend mysql:\/\/127\.0\.0\.1:\d+\/ticketd has auto_increment_offset=1, same as mysql:\/\/127\.0\.0\.1:\d+\/ticketd/,
    },
    {
      name: 'different increments whose classes overlap',
      server: 'b',
      breaks: ['SET GLOBAL auto_increment_increment = 3'],
      restores: ['SET GLOBAL auto_increment_increment = 16'],
      expected:
        /has auto_increment_increment=3, auto_increment_offset=2, whose tickets overlap those of mysql:\/\/\S+ \(16\/1\)/,
    },
    {
      name: 'an offset greater than the increment',
      server: 'b',
      breaks: ['SET GLOBAL auto_increment_offset = 17'],
      restores: ['SET GLOBAL auto_increment_offset = 2'],
      expected: /has auto_increment_offset=17 > auto_increment_increment=16/,
    },
    {
      name: 'an increment smaller than the number of backends',
      server: 'a',
      breaks: ['SET GLOBAL auto_increment_increment = 1'],
      restores: ['SET GLOBAL auto_increment_increment = 2'],
      expected: /has auto_increment_increment=1, smaller than the 2 backends configured/,
    },
    {
      name: 'innodb_flush_log_at_trx_commit ≠ 1',
      server: 'a',
      breaks: ['SET GLOBAL innodb_flush_log_at_trx_commit = 2'],
      restores: ['SET GLOBAL innodb_flush_log_at_trx_commit = 1'],
      expected: /has innodb_flush_log_at_trx_commit=2; it must be 1/,
    },
    {
      name: 'sync_binlog ≠ 1',
      server: 'b',
      breaks: ['SET GLOBAL sync_binlog = 0'],
      restores: ['SET GLOBAL sync_binlog = 1'],
      expected: /has sync_binlog=0; it must be 1/,
    },
    {
      name: 'a ticket table that is not InnoDB',
      server: 'a',
      breaks: ['ALTER TABLE tickets_engine_test ENGINE=MyISAM'],
      restores: ['ALTER TABLE tickets_engine_test ENGINE=InnoDB'],
      expected: /has ticket table tickets_engine_test with ENGINE=MyISAM; it must be InnoDB/,
    },
    {
      name: 'a sequence whose block size differs between backends',
      server: 'b',
      breaks: ["UPDATE ticketd_sequences SET block_size = 7 WHERE name = 'engine_test'"],
      restores: ["UPDATE ticketd_sequences SET block_size = 10 WHERE name = 'engine_test'"],
      expected:
        /sequence engine_test has blockSize=7 startAfter=0 maxId=\d+ ids=ordered on mysql:\/\/\S+ but blockSize=10/,
    },
  ];

  it.each(cases)('refuses $name: check exits 1 and serve will not start, each naming it', async (c) => {
    const server = c.server === 'a' ? pair.a : pair.b;
    await sqlOn(server.url, ...c.breaks);
    try {
      const check = runCli(['check'], env);
      expect(check.status).toBe(1);
      const problems = check.stdout.split('\n').filter((l) => l.startsWith('problem: '));
      expect(problems.some((l) => c.expected.test(l))).toBe(true);
      const serve = runCli(['serve', '--port', '0'], env);
      expect(serve.status).toBe(1);
      expect(serve.stderr.split('\n').some((l) => l.startsWith('ticketd: ') && c.expected.test(l))).toBe(true);
    } finally {
      await sqlOn(server.url, ...c.restores);
    }
  });

  it('with --allow-unsafe-durability, durability problems are warnings and check passes', async () => {
    await sqlOn(pair.a.url, 'SET GLOBAL innodb_flush_log_at_trx_commit = 0');
    try {
      const result = runCli(['check', '--allow-unsafe-durability'], env);
      expect(result.stdout).toMatch(
        /^warning: unsafe durability allowed: backend \S+ has innodb_flush_log_at_trx_commit=0/m,
      );
      expect(result.status).toBe(0);
    } finally {
      await sqlOn(pair.a.url, 'SET GLOBAL innodb_flush_log_at_trx_commit = 1');
    }
  });

  it('reports a backend that lacks a sequence, and one that does not answer', async () => {
    await sqlOn(pair.b.url, "DELETE FROM ticketd_sequences WHERE name = 'engine_test'");
    const missing = runCli(['check'], env);
    expect(missing.status).toBe(1);
    expect(missing.stdout).toMatch(
      /problem: sequence engine_test is missing on backend mysql:\/\/\S+, so it is not used for it/,
    );
    await sqlOn(
      pair.b.url,
      "INSERT INTO ticketd_sequences (name, block_size, max_id) VALUES ('engine_test', 10, 9223372036854775807)",
    );
    const unreachable = runCli(['check'], { TICKETD_BACKENDS: `${pair.backendsUrl},mysql://root@127.0.0.1:1/ticketd` });
    expect(unreachable.status).toBe(1);
    expect(unreachable.stdout).toMatch(/problem: backend mysql:\/\/127\.0\.0\.1:1\/ticketd did not answer/);
    // A server that answers with an error is not called silent.
    const wrongDb = runCli(['check'], { TICKETD_BACKENDS: pair.backendsUrl.replace(/\/ticketd,/, '/no_such_db,') });
    expect(wrongDb.status).toBe(1);
    expect(wrongDb.stdout).toMatch(
      /problem: backend mysql:\/\/127\.0\.0\.1:\d+\/no_such_db has no database no_such_db: create it \(CREATE DATABASE\), then run npx ticketd init\n/,
    );
  });

  it('reports a backend with the schema of ticketd 0.2 (no claim tables); init upgrades it and turns its marks into floors', async () => {
    await sqlOn(
      pair.b.url,
      'DROP TABLE ticketd_claims',
      'DROP TABLE ticketd_claim_floors',
      "INSERT INTO ticketd_marks (sequence, stripe_increment, stripe_residue, ticket, backend_id) VALUES ('engine_test', 2, 1, 777, 'old')",
    );
    const old = runCli(['check'], env);
    expect(old.status).toBe(1);
    expect(old.stdout).toMatch(
      /problem: backend mysql:\/\/\S+ lacks ticketd_claims, ticketd_claim_floors \(schema of an older ticketd\); run npx ticketd init/,
    );
    expect(runCli(['init'], env).status).toBe(0);
    expect(runCli(['check'], env).status).toBe(0);
    const conn = await mysql.createConnection(pair.b.url);
    try {
      const [rows] = await conn.query<RowDataPacket[]>(
        "SELECT MAX(floor_ticket) AS floor FROM ticketd_claim_floors WHERE sequence = 'engine_test' AND stripe_residue = 1",
      );
      expect(String(rows[0]?.floor)).toBe('777');
    } finally {
      await conn.end();
    }
  });
});
