/**
 * The cut of a legacy column between the old version (AUTO_INCREMENT) and the new one (ticketd's
 * IDs), for signed and unsigned INT and BIGINT, on every engine found: apply moves AUTO_INCREMENT
 * above the sequence's maxId; the new version's explicit inserts below it never move it; verify
 * finds, ID by ID, an ID ticketd could still issue and an ID held twice (the ID column here has a
 * non-unique key, where a duplicate goes in silently).
 */
import mysql from 'mysql2/promise';
import { describeEachEngine } from '../support/engines.js';
import { postIds, runCliAsync, sharedBackends, startInProcess, startLegacyServer } from '../support/ticketd.js';
import type { RunningTicketd } from '../../src/server.js';

const TYPES: [string, string, bigint][] = [
  ['INT', 'int', 2147483647n],
  ['INT UNSIGNED', 'uint', 4294967295n],
  ['BIGINT', 'big', 9223372036854775807n],
  ['BIGINT UNSIGNED', 'ubig', 18446744073709551615n],
];

describeEachEngine('the cut-over of a legacy column', (engine) => {
  let legacy: Awaited<ReturnType<typeof startLegacyServer>>;
  let server: RunningTicketd;
  let db: mysql.Connection;

  beforeAll(async () => {
    legacy = await startLegacyServer(engine.binary);
    server = await startInProcess(sharedBackends());
    db = await mysql.createConnection({ uri: legacy.url, supportBigNumbers: true, bigNumberStrings: true });
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await server?.close();
    await legacy?.stop();
  });

  /** An insert without an ID, as the old version does it; the ID it took, read exactly (LAST_INSERT_ID is unsigned). */
  const insertOld = async (table: string): Promise<bigint> => {
    await db.query(`INSERT INTO ${table} (customer) VALUES ('old')`);
    const [rows] = await db.query<mysql.RowDataPacket[]>('SELECT CAST(LAST_INSERT_ID() AS CHAR) AS id');
    return BigInt(String(rows[0]!.id));
  };

  it.each(TYPES)(
    '%s: old-version IDs above maxId, new-version IDs below it never move AUTO_INCREMENT, verify exact',
    async (idType, suffix, columnMax) => {
      const table = `cut_${suffix}`;
      const sequence = `cut_${engine.binary.flavor}_${suffix}`;
      const env = { TICKETD_BACKENDS: sharedBackends(), TICKETD_SOURCE: legacy.url };
      const flags = ['--table', table, '--sequence', sequence];
      await db.query(
        `CREATE TABLE ${table} (id ${idType} NOT NULL AUTO_INCREMENT, customer VARCHAR(20) NOT NULL, KEY (id))`,
      );
      for (let i = 0; i < 50; i++) await insertOld(table);

      const applied = await runCliAsync(['migrate', 'apply', ...flags, '--block-size', '100'], env);
      expect(applied.stderr).toBe('');
      const [, startAfterText, maxIdText] = /startAfter=(\d+) maxId=(\d+)/.exec(applied.stdout)!;
      const startAfter = BigInt(startAfterText!);
      const maxId = BigInt(maxIdText!);
      // The larger of MAX(id) and AUTO_INCREMENT (51), plus the default headroom.
      expect(startAfter).toBe(10_051n);
      expect(maxId).toBe(columnMax - (columnMax - startAfter) / 16n);
      expect(applied.stdout).toContain(`ran: ALTER TABLE \`${table}\` AUTO_INCREMENT = ${maxId + 1n}`);

      // The two writers interleaved: the old version's counter moves by one per own insert only.
      const first = await insertOld(table);
      expect(first).toBe(maxId + 1n);
      const ids = (await postIds(server.url, sequence, 300)).map(BigInt);
      expect(ids.every((id) => id > startAfter && id <= maxId)).toBe(true);
      await db.query(`INSERT INTO ${table} (id, customer) VALUES ${ids.map((id) => `(${id}, 'new')`).join(', ')}`);
      expect(await insertOld(table)).toBe(first + 1n);

      const ok = await runCliAsync(['migrate', 'verify', ...flags], env);
      expect(ok.stdout).toMatch(
        new RegExp(`^ok: 300 IDs above startAfter ${startAfter}, all in blocks ticketd has handed out$`, 'm'),
      );
      expect(ok.stdout).toContain(`old version: 2 IDs above maxId ${maxId}, in the reserve up to ${columnMax}`);
      expect(ok.status).toBe(0);

      // Planted: an ID ticketd has not issued and could issue later (the top of its range, in no block
      // handed out yet), and an ID held by two rows.
      const unissued = maxId - 1n;
      await db.query(`INSERT INTO ${table} (id, customer) VALUES (${unissued}, 'planted'), (${ids[0]}, 'planted')`);
      const bad = await runCliAsync(['migrate', 'verify', ...flags], env);
      expect(bad.stdout).toContain(
        `problem: 1 of 301 IDs above startAfter ${startAfter} were not made by ticketd, which may hand them out later: ${unissued} (written without ticketd`,
      );
      expect(bad.stdout).toContain(
        `problem: 1 IDs are held by more than one row (a collision that happened; the column has no unique key): ${ids[0]}`,
      );
      expect(bad.status).toBe(1);
    },
    60_000,
  );
});
