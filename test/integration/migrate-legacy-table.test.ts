import mysql from 'mysql2/promise';
import { runCliAsync, sharedBackends, startLegacyServer, useSharedServer } from '../support/ticketd.js';

/** 2^18 = 262,144 rows, one second apart, all through AUTO_INCREMENT (bulk inserts leave gaps). */
const LEGACY_ROWS = 262_144;

interface PlanJson {
  columnType: string;
  maxExisting: string;
  autoIncrement: string | null;
  growth: { idsPerSecond: number } | null;
  blockSize: string;
  startAfter: string;
  maxId: string;
  columnMax: string;
  legacyReserve: string;
  alterStatement: string;
  insertStatement: string;
}

describe('migrating a legacy AUTO_INCREMENT table', () => {
  const context = useSharedServer();
  let legacy: Awaited<ReturnType<typeof startLegacyServer>>;
  let db: mysql.Connection;
  const env = (): Record<string, string> => ({ TICKETD_BACKENDS: sharedBackends() });
  const source = (): string[] => ['--source', legacy.url];

  beforeAll(async () => {
    legacy = await startLegacyServer();
    db = await mysql.createConnection({ uri: legacy.url, supportBigNumbers: true, bigNumberStrings: true });
  });
  afterAll(async () => {
    await db?.end();
    await legacy?.stop();
  });

  /** A table like a legacy app's, filled through AUTO_INCREMENT by doubling, one row per second. */
  async function legacyTable(name: string, idType: string, rows = LEGACY_ROWS): Promise<void> {
    await db.query(
      `CREATE TABLE ${name} (id ${idType} NOT NULL AUTO_INCREMENT PRIMARY KEY, customer VARCHAR(40) NOT NULL, created_at DATETIME NOT NULL)`,
    );
    await db.query(`INSERT INTO ${name} (customer, created_at) VALUES ('first', '2026-01-01 00:00:00')`);
    for (let n = 1; n < rows; n *= 2) {
      await db.query(
        `INSERT INTO ${name} (customer, created_at) SELECT customer, created_at + INTERVAL ${n} SECOND FROM ${name} ORDER BY id`,
      );
    }
  }

  const legacyMax = async (table: string): Promise<bigint> => {
    const [rows] = await db.query<mysql.RowDataPacket[]>(`SELECT MAX(id) AS top FROM ${table}`);
    return BigInt(String(rows[0]!.top));
  };

  const issue = async (sequence: string, count: number): Promise<bigint[]> => {
    const res = await fetch(`${context.server.url}/v1/sequences/${sequence}/ids?count=${count}`, { method: 'POST' });
    expect(res.status).toBe(200);
    return ((await res.json()) as { ids: string[] }).ids.map(BigInt);
  };

  // 2^18 rows built by doubling, and an ALTER that copies them: up to a minute on a shared 2-core machine.
  it.each([
    ['INT signed', 'INT', 'orders_int', 2147483647n, '100'],
    ['INT UNSIGNED', 'INT UNSIGNED', 'orders_uint', 4294967295n, '100'],
    ['BIGINT', 'BIGINT', 'orders_big', 9223372036854775807n, '10000'],
  ])(
    '%s: plan reads the column, apply creates a sequence above every legacy ID, verify accepts only ticketd IDs',
    async (_label, idType, table, maxId, blockSize) => {
      await legacyTable(table, idType);
      const plan = await runCliAsync(['migrate', 'plan', ...source(), '--table', table, '--json'], env());
      expect(plan.stderr).toBe('');
      const p = JSON.parse(plan.stdout) as PlanJson;
      expect(p.columnMax).toBe(String(maxId));
      // The sequence stops below the column's largest value: the rest is the old version's reserve.
      expect(BigInt(p.legacyReserve)).toBe((maxId - BigInt(p.startAfter)) / 16n);
      expect(BigInt(p.maxId)).toBe(maxId - BigInt(p.legacyReserve));
      const top = await legacyMax(table);
      expect(top).toBeGreaterThanOrEqual(LEGACY_ROWS);
      expect(p.maxExisting).toBe(String(top));
      expect(p.blockSize).toBe(blockSize);
      const high = BigInt(p.autoIncrement!) > top ? BigInt(p.autoIncrement!) : top;
      expect(BigInt(p.startAfter)).toBe(high + 10_000n);
      // One row per second; INSERT … SELECT reserves IDs in batches, so a little more than one ID.
      expect(p.growth!.idsPerSecond).toBeGreaterThanOrEqual(1);
      expect(p.growth!.idsPerSecond).toBeLessThan(2);
      expect(p.alterStatement).toBe(`ALTER TABLE \`${table}\` MODIFY \`id\` ${p.columnType} NOT NULL`);
      expect(p.insertStatement).toBe(
        `INSERT INTO \`${table}\` (\`id\`, \`customer\`, \`created_at\`) VALUES (?, ?, ?)`,
      );
      const text = await runCliAsync(['migrate', 'plan', ...source(), '--table', table], env());
      expect(text.stdout).toMatch(/^lasts: +[0-9.]+ years at that rate/m);
      expect(text.stdout).toContain(`--start-after ${p.startAfter}`);

      // The apply command the plan printed runs as it is, in this checkout.
      const printed = /^ {2}1\. (npx ticketd migrate apply .*)$/m.exec(text.stdout)![1]!;
      expect(printed).toContain(`--block-size ${blockSize} --start-after ${p.startAfter}`);
      const applied = await runCliAsync(['-c', printed], env(), ['bash']);
      expect(applied.stderr).toBe('');
      expect(applied.stdout).toMatch(
        new RegExp(
          `^sequence ${table} created on 2 backends: blockSize=${blockSize} startAfter=${p.startAfter} maxId=${p.maxId}`,
          'm',
        ),
      );
      expect(applied.stdout).toContain(`ran: ALTER TABLE \`${table}\` AUTO_INCREMENT = ${BigInt(p.maxId) + 1n}`);
      // Apply twice is safe; a conflicting apply is refused.
      expect(
        (await runCliAsync(['migrate', 'apply', ...source(), '--table', table, '--block-size', blockSize], env()))
          .stdout,
      ).toMatch(/already exists .*left alone/);
      const conflict = await runCliAsync(
        ['migrate', 'apply', ...source(), '--table', table, '--block-size', '7'],
        env(),
      );
      expect(conflict.status).toBe(1);
      expect(conflict.stderr).toMatch(/^ticketd: sequence .* exists with blockSize=/);

      // The app now inserts with ticketd's IDs: all above the legacy maximum, all accepted by verify.
      const ids = await issue(table, 500);
      const before = await legacyMax(table);
      for (const id of ids) expect(id > before && id > BigInt(p.startAfter)).toBe(true);
      await db.query(
        `INSERT INTO ${table} (id, customer, created_at) VALUES ${ids.map((id) => `(${id}, 'sdk', NOW())`).join(', ')}`,
      );
      const ok = await runCliAsync(['migrate', 'verify', ...source(), '--table', table], env());
      expect(ok.status).toBe(0);
      expect(ok.stdout).toMatch(/^ok: 500 IDs above startAfter/);
      expect(ok.stdout).toMatch(/^warning: .* still has AUTO_INCREMENT/m);
      expect((await runCliAsync(['migrate', 'verify', ...source(), '--table', table, '--strict'], env())).status).toBe(
        1,
      );

      // An ID above startAfter that ticketd did not make is one it could hand out later.
      const rogue = ids[ids.length - 1]! + 50_000_000n;
      await db.query(`INSERT INTO ${table} (id, customer, created_at) VALUES (${rogue}, 'rogue', NOW())`);
      const bad = await runCliAsync(['migrate', 'verify', ...source(), '--table', table], env());
      expect(bad.status).toBe(1);
      expect(bad.stdout).toContain(
        `problem: 1 of 501 IDs above startAfter ${p.startAfter} were not made by ticketd, which may hand them out later: ${rogue}`,
      );
      await db.query(`DELETE FROM ${table} WHERE id = ${rogue}`);

      // Dropping AUTO_INCREMENT (only with --alter) makes verify --strict pass.
      const alter = await runCliAsync(['migrate', 'apply', ...source(), '--table', table, '--alter'], env());
      expect(alter.stdout).toContain(`ran: ${p.alterStatement}`);
      const strict = await runCliAsync(['migrate', 'verify', ...source(), '--table', table, '--strict'], env());
      expect(strict.stdout).toBe(
        `ok: 500 IDs above startAfter ${p.startAfter}, all in blocks ticketd has handed out\n` +
          `old version: 0 IDs above maxId ${p.maxId}, in the reserve up to ${maxId} that ticketd never reaches (inserted through AUTO_INCREMENT)\n`,
      );
      expect(strict.status).toBe(0);
    },
    150_000,
  );

  it('BIGINT with --ids strict: the printed apply makes a strict sequence above the legacy IDs, its IDs increasing from one request to the next', async () => {
    const table = 'orders_strict';
    await legacyTable(table, 'BIGINT', 1024);
    const text = await runCliAsync(['migrate', 'plan', ...source(), '--table', table, '--ids', 'strict'], env());
    expect(text.stderr).toBe('');
    const printed = /^ {2}1\. (npx ticketd migrate apply .*)$/m.exec(text.stdout)![1]!;
    expect(printed).toMatch(/ --ids strict$/);
    expect((await runCliAsync(['-c', printed], env(), ['bash'])).stderr).toBe('');
    expect((await runCliAsync(['sequences', 'list'], env())).stdout).toMatch(
      new RegExp(`^${table}\\t.*\\tids=strict\\t`, 'm'),
    );
    const startAfter = BigInt(/--start-after (\d+)/.exec(printed)![1]!);
    expect(startAfter).toBeGreaterThanOrEqual(await legacyMax(table));
    const first = await issue(table, 3);
    const second = await issue(table, 3);
    expect(first[0]).toBe(startAfter + 1n);
    expect([...first, ...second]).toEqual([...first, ...second].sort((a, b) => (a < b ? -1 : 1)));
    expect(second[0]! > first[2]!).toBe(true);
  });

  it('INT signed with --ids opaque: the printed apply makes an opaque sequence whose IDs stay in INT above the legacy ones, and verify decodes them', async () => {
    const table = 'orders_opaque';
    await legacyTable(table, 'INT', 4096);
    const text = await runCliAsync(['migrate', 'plan', ...source(), '--table', table, '--ids', 'opaque'], env());
    expect(text.stderr).toBe('');
    const printed = /^ {2}1\. (npx ticketd migrate apply .*)$/m.exec(text.stdout)![1]!;
    expect(printed).toMatch(/ --ids opaque$/);
    const applied = await runCliAsync(['-c', printed], env(), ['bash']);
    expect(applied.stderr).toBe('');
    const startAfter = BigInt(/--start-after (\d+)/.exec(printed)![1]!);
    expect((await runCliAsync(['sequences', 'list'], env())).stdout).toMatch(
      new RegExp(`^${table}\\t.*\\tids=opaque\\t`, 'm'),
    );

    const ids = await issue(table, 2000);
    expect(ids.every((id) => id > startAfter && id <= 2147483647n)).toBe(true);
    // Not in order: an ordered sequence's 2,000 IDs would be one increasing run.
    expect(ids.filter((id, k) => k > 0 && id > ids[k - 1]!).length).toBeLessThan(1200);
    await db.query(
      `INSERT INTO ${table} (id, customer, created_at) VALUES ${ids.map((id) => `(${id}, 'sdk', NOW())`).join(', ')}`,
    );
    const ok = await runCliAsync(['migrate', 'verify', ...source(), '--table', table], env());
    expect(ok.stdout).toMatch(/^ok: 2000 IDs above startAfter/);
    // An ID ticketd did not hand out decodes to a block it has not handed out (almost surely).
    const rogue = BigInt(/maxId=(\d+)/.exec(applied.stdout)![1]!) - 647n;
    await db.query(`INSERT INTO ${table} (id, customer, created_at) VALUES (${rogue}, 'rogue', NOW())`);
    const bad = await runCliAsync(['migrate', 'verify', ...source(), '--table', table], env());
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain(`problem: 1 of 2001 IDs above startAfter ${startAfter} were not made by ticketd`);
    // A column too narrow for a million opaque IDs above the legacy ones is refused.
    await legacyTable('tiny_opaque', 'SMALLINT', 16);
    const narrow = await runCliAsync(
      ['migrate', 'plan', ...source(), '--table', 'tiny_opaque', '--ids', 'opaque'],
      env(),
    );
    expect(narrow.status).toBe(1);
    expect(narrow.stderr).toMatch(/^ticketd: --ids opaque needs at least 1000000 IDs above startAfter/);
  });

  it('apply refuses when a table still taking inserts has grown past startAfter, and succeeds with headroom', async () => {
    await legacyTable('busy', 'INT', 1024);
    let startAfter: bigint;
    let maxId: bigint;
    let inserting = true;
    const writer = (async () => {
      const conn = await mysql.createConnection(legacy.url);
      while (inserting) await conn.query("INSERT INTO busy (customer, created_at) VALUES ('live', NOW())");
      await conn.end();
    })();
    try {
      await new Promise((r) => setTimeout(r, 300));
      const tight = await runCliAsync(
        ['migrate', 'apply', ...source(), '--table', 'busy', '--start-after', String(await legacyMax('busy'))],
        env(),
      );
      expect(tight.status).toBe(1);
      expect(tight.stderr).toMatch(
        /^ticketd: busy\.id has reached \d+, past startAfter \d+: the legacy app outgrew the headroom/,
      );
      const list = await runCliAsync(['sequences', 'list'], env());
      expect(list.stdout).not.toMatch(/^busy\t/m);

      const roomy = await runCliAsync(
        ['migrate', 'apply', ...source(), '--table', 'busy', '--headroom', '1000000'],
        env(),
      );
      expect(roomy.stderr).toBe('');
      expect(roomy.stdout).toMatch(/^sequence busy created/m);
      const [, from, to] = /startAfter=(\d+) maxId=(\d+)/.exec(roomy.stdout)!;
      startAfter = BigInt(from!);
      maxId = BigInt(to!);
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      inserting = false;
      await writer;
    }
    // The writer went on through AUTO_INCREMENT after apply: all of it above maxId, none in ticketd's range.
    const [rows] = await db.query<mysql.RowDataPacket[]>(
      `SELECT SUM(id > ${startAfter} AND id <= ${maxId}) AS inside, SUM(id > ${maxId}) AS above FROM busy`,
    );
    expect(Number(rows[0]!.inside)).toBe(0);
    expect(Number(rows[0]!.above)).toBeGreaterThan(0);
    const ids = await issue('busy', 200);
    for (const id of ids) expect(id > startAfter && id <= maxId).toBe(true);
  });

  it('a 32-bit table near its top: refused without room; with no reserve (no old version left, --alter), stops exactly at 2147483647', async () => {
    await db.query(
      'CREATE TABLE nearly_full (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, note VARCHAR(10)) AUTO_INCREMENT=2147483000',
    );
    for (let i = 0; i < 100; i++) await db.query("INSERT INTO nearly_full (note) VALUES ('x')");
    const none = await runCliAsync(['migrate', 'plan', ...source(), '--table', 'nearly_full'], env());
    expect(none.status).toBe(1);
    expect(none.stderr).toMatch(
      /^ticketd: nearly_full\.id \(int\(11\)\) holds at most 2147483647; startAfter \d+ leaves no IDs/,
    );
    // No reserve while AUTO_INCREMENT is on would let an insert without an ID take ticketd's IDs: refused.
    const unsafe = await runCliAsync(
      ['migrate', 'apply', ...source(), '--table', 'nearly_full', '--headroom', '100', '--legacy-reserve', '0'],
      env(),
    );
    expect(unsafe.status).toBe(1);
    expect(unsafe.stderr).toMatch(
      /no reserve is left for inserts without an ID.*add --alter to drop AUTO_INCREMENT first/,
    );
    const applied = await runCliAsync(
      [
        'migrate',
        'apply',
        ...source(),
        '--table',
        'nearly_full',
        '--headroom',
        '100',
        '--legacy-reserve',
        '0',
        '--alter',
      ],
      env(),
    );
    expect(applied.stderr).toBe('');
    // AUTO_INCREMENT went before the sequence came, and only once.
    expect(applied.stdout).toMatch(
      /^ran: ALTER TABLE `nearly_full` MODIFY `id` int\S* NOT NULL\nsequence nearly_full created/m,
    );
    expect(applied.stdout.match(/^ran: /gm)).toHaveLength(1);
    const startAfter = BigInt(/startAfter=(\d+)/.exec(applied.stdout)![1]!);

    const ids: bigint[] = [];
    let last: Response;
    for (;;) {
      last = await fetch(`${context.server.url}/v1/sequences/nearly_full/ids?count=7`, { method: 'POST' });
      if (last.status !== 200) break;
      ids.push(...((await last.json()) as { ids: string[] }).ids.map(BigInt));
    }
    expect(last.status).toBe(409);
    // Fewer than 7 may be left: single IDs drain the rest, then run out with the same problem.
    for (;;) {
      last = await fetch(`${context.server.url}/v1/sequences/nearly_full/next`);
      if (last.status !== 200) break;
      ids.push(BigInt(((await last.json()) as { id: string }).id));
    }
    expect(last.status).toBe(409);
    expect(await last.json()).toMatchObject({
      type: '/problems/sequence-exhausted',
      code: 'TICKETD_SEQUENCE_EXHAUSTED',
    });
    for (const id of ids) expect(id > startAfter && id <= 2147483647n).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.reduce((a, b) => (a > b ? a : b))).toBe(2147483647n);

    // The state is shown where operators look: the sequence itself and /readyz.
    const detail = (await (await fetch(`${context.server.url}/v1/sequences/nearly_full`)).json()) as {
      capacity: { level: string; usedPercent: number; highestId: string };
    };
    expect(detail.capacity).toMatchObject({ level: 'exhausted', usedPercent: 100, highestId: '2147483647' });
    const ready = (await (await fetch(`${context.server.url}/readyz`)).json()) as {
      sequences: Record<string, { level: string }>;
    };
    expect(ready.sequences.nearly_full).toMatchObject({ level: 'exhausted' });
  });
});
