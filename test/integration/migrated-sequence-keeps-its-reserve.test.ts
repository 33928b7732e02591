/**
 * A migrated sequence remembers the legacy reserve above its maxId, on every engine: while the
 * legacy table keeps AUTO_INCREMENT (the old version inserts above maxId), no widening reaches into
 * it, by the CLI or over HTTP; once `migrate apply --alter` drops AUTO_INCREMENT, it may grow again.
 */
import mysql from 'mysql2/promise';
import type { RunningTicketd } from '../../src/server.js';
import { describeEachEngine } from '../support/engines.js';
import {
  runCliAsync,
  sharedBackends,
  startInProcess,
  startLegacyServer,
  TEST_ADMIN_TOKEN,
} from '../support/ticketd.js';

describeEachEngine('a migrated sequence keeps its reserve', (engine) => {
  let legacy: Awaited<ReturnType<typeof startLegacyServer>>;
  let server: RunningTicketd;
  let db: mysql.Connection;

  beforeAll(async () => {
    legacy = await startLegacyServer(engine.binary);
    server = await startInProcess(sharedBackends());
    db = await mysql.createConnection(legacy.url);
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await server?.close();
    await legacy?.stop();
  });

  it('refuses to widen into the old version’s reserve until AUTO_INCREMENT is gone', async () => {
    const table = 'reserve_orders';
    const sequence = `reserve_${engine.binary.flavor}`;
    const env = { TICKETD_BACKENDS: sharedBackends(), TICKETD_SOURCE: legacy.url };
    const flags = ['--table', table, '--sequence', sequence];
    await db.query(`CREATE TABLE ${table} (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, customer VARCHAR(20))`);
    for (let i = 0; i < 20; i++) await db.query(`INSERT INTO ${table} (customer) VALUES ('old')`);

    const applied = await runCliAsync(['migrate', 'apply', ...flags, '--block-size', '10'], env);
    expect(applied.stderr).toBe('');
    const maxId = BigInt(/maxId=(\d+)/.exec(applied.stdout)![1]!);
    expect(maxId).toBeLessThan(2147483647n);

    const widen = (to: bigint): ReturnType<typeof runCliAsync> =>
      runCliAsync(['sequences', 'set', sequence, '--max-id', String(to)], env);
    const refused = await widen(maxId + 1n);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(
      new RegExp(
        `^ticketd: sequence ${sequence} cannot be widened past ${maxId} on mysql://.*: migrated from ${table}\\.id, whose AUTO_INCREMENT keeps the IDs above it for the old version .*\\(TICKETD_SEQUENCE_CONFLICT\\)$`,
      ),
    );
    const patched = await fetch(`${server.url}/v1/sequences/${sequence}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ maxId: '2147483647' }),
    });
    expect(patched.status).toBe(409);
    expect(((await patched.json()) as { code: string }).code).toBe('TICKETD_SEQUENCE_CONFLICT');
    // The same maxId is no widening: a repeat is fine.
    expect((await widen(maxId)).status).toBe(0);
    // A second apply (as after an upgrade from 0.11, which kept no ceiling) records it again: still refused.
    const again = await runCliAsync(['migrate', 'apply', ...flags, '--block-size', '10'], env);
    expect(again.stderr).toBe('');
    expect(again.status).toBe(0);
    expect((await widen(maxId + 1n)).status).toBe(1);

    // With no old version left, apply --alter drops AUTO_INCREMENT: nothing inserts above maxId any more.
    const altered = await runCliAsync(['migrate', 'apply', ...flags, '--block-size', '10', '--alter'], env);
    expect(altered.stderr).toBe('');
    expect(altered.status).toBe(0);
    const grown = await widen(2147483647n);
    expect(grown.stderr).toBe('');
    expect(grown.status).toBe(0);
  }, 120_000);
});
