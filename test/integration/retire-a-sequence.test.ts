/**
 * Retiring a sequence for good, under load from two ticketd processes: once DELETE has answered, no
 * backend hands a ticket of it to anyone (a REPLACE of any ticketd version fails, tried here in
 * SQL), the process that answered refuses at once, the other within its recheck although it holds
 * cached blocks, no ID was served twice, its counters and claims stay, and its name never starts
 * again. With a backend down it is a 503 that a repeat completes.
 */
import mysql from 'mysql2/promise';
import type { RunningTicketd } from '../../src/server.js';
import { SETTINGS_RECHECK_MS } from '../../src/service/sequence-entry.js';
import { IdLedger, sleep, startLoad } from '../support/id-ledger.js';
import { putSequence, runCli, startInProcess, startPrivatePair, TEST_ADMIN_TOKEN } from '../support/ticketd.js';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

describe('retiring a sequence', () => {
  let pair: Awaited<ReturnType<typeof startPrivatePair>>;
  let answering: RunningTicketd;
  let caching: RunningTicketd;

  beforeAll(async () => {
    pair = await startPrivatePair();
    answering = await startInProcess(pair.backendsUrl);
    caching = await startInProcess(pair.backendsUrl);
  });

  afterAll(async () => {
    await answering?.close();
    await caching?.close();
    await pair?.dispose();
  });

  /** What a REPLACE by column name (ticketd 0.5 and older) and by position (0.6 and later) do on a backend now. */
  async function replaces(url: string, sequence: string): Promise<string[]> {
    const conn = await mysql.createConnection(url);
    try {
      const outcomes: string[] = [];
      for (const sql of [
        `REPLACE INTO tickets_${sequence} (stub) VALUES ('a')`,
        `REPLACE INTO tickets_${sequence} VALUES (NULL, 'a')`,
      ]) {
        outcomes.push(
          await conn.query(sql).then(
            () => 'ticket',
            (error: unknown) => String((error as { code?: string }).code),
          ),
        );
      }
      return outcomes;
    } finally {
      await conn.end();
    }
  }

  async function counterAndClaims(url: string, sequence: string): Promise<{ next: bigint; claims: number }> {
    const conn = await mysql.createConnection(url);
    try {
      const [t] = await conn.query<mysql.RowDataPacket[]>(
        'SELECT AUTO_INCREMENT AS next FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
        [`tickets_${sequence}`],
      );
      const [c] = await conn.query<mysql.RowDataPacket[]>(
        'SELECT COUNT(*) AS n FROM ticketd_claims WHERE sequence = ?',
        [sequence],
      );
      // The claims this backend holds: of its peer's tickets.
      return { next: BigInt(String(t[0]!.next)), claims: Number(c[0]!.n) };
    } finally {
      await conn.end();
    }
  }

  it('stops every process and every backend, keeps counters and claims, and never lets the name start again', async () => {
    const name = 'gone';
    // Blocks of 100,000: the processes serve from memory, so the one that was not asked stops by its recheck, not by a refill.
    expect(await putSequence(answering.url, name, { blockSize: 100_000 })).toBe(201);
    const ledger = new IdLedger();
    const load = startLoad(
      ledger,
      [
        { url: answering.url, name: 'answering' },
        { url: caching.url, name: 'caching' },
      ],
      name,
      4,
    );
    await sleep(1500);
    expect(await replaces(pair.a.url, name)).toEqual(['ticket', 'ticket']);
    const before = await Promise.all([pair.a.url, pair.b.url].map((url) => counterAndClaims(url, name)));

    const retired = await fetch(`${answering.url}/v1/sequences/${name}`, { method: 'DELETE', headers: admin });
    const retiredAt = Date.now();
    expect(retired.status).toBe(200);
    expect(await retired.json()).toMatchObject({ name, retired: true });
    // New tickets stop at once, on every backend, for every version's REPLACE.
    for (const url of [pair.a.url, pair.b.url])
      expect(await replaces(url, name)).toEqual(['ER_BAD_FIELD_ERROR', 'ER_WRONG_VALUE_COUNT_ON_ROW']);
    expect((await fetch(`${answering.url}/v1/sequences/${name}/next`)).status).toBe(410);

    // The other process holds cached blocks: it stops within its recheck.
    let stoppedAfter = -1;
    while (Date.now() - retiredAt < SETTINGS_RECHECK_MS + 3000) {
      const res = await fetch(`${caching.url}/v1/sequences/${name}/ids?count=1`, { method: 'POST' });
      const body = (await res.json()) as { code?: string };
      if (res.status === 410) {
        expect(body.code).toBe('TICKETD_SEQUENCE_RETIRED');
        stoppedAfter = Date.now() - retiredAt;
        break;
      }
      await sleep(100);
    }
    await load.stop();
    console.log(
      `retired under load: ${ledger.unique} IDs, ${ledger.repeats.length} repeated; the process with cached blocks stopped ${stoppedAfter} ms after DELETE answered (recheck every ${SETTINGS_RECHECK_MS} ms); statuses ${JSON.stringify(Object.fromEntries(ledger.statuses))}`,
    );
    expect(stoppedAfter).toBeGreaterThanOrEqual(0);
    expect(ledger.repeats).toEqual([]);
    for (const s of [answering, caching]) {
      expect((await fetch(`${s.url}/v1/sequences/${name}/blocks`, { method: 'POST' })).status).toBe(410);
      expect(
        (
          await fetch(`${s.url}/v1/sequences/${name}`, {
            method: 'PATCH',
            headers: { ...admin, 'content-type': 'application/json' },
            body: '{"maxId":"99999999999"}',
          })
        ).status,
      ).toBe(410);
    }

    // Counters and claims stay; the name cannot start again; the lists say retired; retiring again is a 200.
    // (Counted over both backends: with blocks of 100,000 a short load may take no ticket of B.)
    const after = await Promise.all([pair.a.url, pair.b.url].map((url) => counterAndClaims(url, name)));
    for (let i = 0; i < 2; i++) expect(after[i]!.next).toBeGreaterThanOrEqual(before[i]!.next);
    expect(after[0]!.claims + after[1]!.claims).toBeGreaterThan(0);
    const again = await fetch(`${caching.url}/v1/sequences/${name}`, {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/json' },
      body: '{"blockSize":100000}',
    });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { detail: string }).detail).toMatch(/retired .*never created again/);
    const listed = (await (await fetch(`${answering.url}/v1/sequences`)).json()) as {
      sequences: { name: string; retired?: boolean }[];
    };
    expect(listed.sequences.find((s) => s.name === name)).toMatchObject({ retired: true });
    expect(runCli(['sequences', 'list'], { TICKETD_BACKENDS: pair.backendsUrl }).stdout).toMatch(
      new RegExp(`^${name}\\t.*\\tretired$`, 'm'),
    );
    // The status page and /metrics of both processes show it retired (its capacity alarm is gone with its cache).
    for (const s of [answering, caching]) {
      expect(await (await fetch(`${s.url}/metrics`)).text()).toContain(
        `ticketd_sequence_retired{sequence="${name}"} 1`,
      );
      expect(await (await fetch(`${s.url}/`)).text()).toMatch(
        new RegExp(`<td>${name}</td>(<td></td>){8}<td>retired</td>`),
      );
    }
    expect((await fetch(`${caching.url}/v1/sequences/${name}`, { method: 'DELETE', headers: admin })).status).toBe(200);
  }, 60_000);

  it('with a backend down answers 503 (the one that answered takes no ticket already), and a repeat completes it', async () => {
    const name = 'gone_later';
    expect(await putSequence(answering.url, name, { blockSize: 10 })).toBe(201);
    await pair.b.stop();
    const env = { TICKETD_BACKENDS: pair.backendsUrl };
    const down = runCli(['sequences', 'retire', name], env);
    expect([down.status, down.stderr]).toEqual([
      1,
      expect.stringMatching(/not retired on .*repeat the request to complete it .*\(TICKETD_BACKENDS_UNAVAILABLE\)$/),
    ]);
    expect(await replaces(pair.a.url, name)).toEqual(['ER_BAD_FIELD_ERROR', 'ER_WRONG_VALUE_COUNT_ON_ROW']);
    await pair.b.restart();
    const done = runCli(['sequences', 'retire', name], env);
    expect(done.stderr).toBe('');
    expect(done.stdout).toMatch(/^sequence gone_later is retired on every backend/);
    expect(await replaces(pair.b.url, name)).toEqual(['ER_BAD_FIELD_ERROR', 'ER_WRONG_VALUE_COUNT_ON_ROW']);
  }, 60_000);
});
