// Rolling upgrades (docs/operating.md, "Upgrades and rollbacks"): ticketd 0.3.0, built from this
// repository's history, serves beside this version on the same backends. An opaque sequence it would
// read as ordered (serving raw IDs that can equal permuted ones) is out of its reach, and what a
// later ticketd needs is refused by this one with the version named.
import mysql from 'mysql2/promise';
import { IdLedger, sleep, startLoad } from '../support/id-ledger.js';
import { buildRelease } from '../support/old-release.js';
import {
  killConnections,
  putSequence,
  runCliAsync,
  spawnTicketd,
  sqlOn,
  startPrivatePair,
  TEST_ADMIN_TOKEN,
  type ChildTicketd,
} from '../support/ticketd.js';
import { THIS_VERSION } from '../../src/core/versions.js';

const OPAQUE = { blockSize: 100, maxId: '2147483647', ids: 'opaque' };

/**
 * The last ticket a REPLACE took from a sequence's ticket table on a backend: the id of its one row.
 * (Its AUTO_INCREMENT may still be advanced, never a ticket taken: a catch-up moves it up without one.)
 */
async function lastTicketOf(url: string, sequence: string): Promise<bigint> {
  const conn = await mysql.createConnection(url);
  try {
    const [rows] = await conn.query<mysql.RowDataPacket[]>(
      `SELECT COALESCE(MAX(id), 0) AS last FROM tickets_${sequence}`,
    );
    return BigInt(String(rows[0]!.last));
  } finally {
    await conn.end();
  }
}

/** Sends requests to one server until stopped; counts its answers by status and the IDs it served. */
function hammer(url: string, sequence: string): { stop(): Promise<{ statuses: Map<number, number>; served: number }> } {
  let running = true;
  const statuses = new Map<number, number>();
  let served = 0;
  const loop = (async () => {
    while (running) {
      const res = await fetch(`${url}/v1/sequences/${sequence}/ids?count=10`, { method: 'POST' }).catch(
        () => undefined,
      );
      const status = res?.status ?? 0;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status === 200) served += ((await res!.json()) as { ids: string[] }).ids.length;
      else await res?.body?.cancel();
      await sleep(20);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { statuses, served };
    },
  };
}

describe('an earlier release beside this one', () => {
  const built = buildRelease('0.3.0');
  let pair: Awaited<ReturnType<typeof startPrivatePair>>;
  const children: ChildTicketd[] = [];

  beforeAll(async () => {
    if ('unavailable' in built) {
      console.log(`old-release test does not run: ${built.unavailable}`);
      return;
    }
    pair = await startPrivatePair();
  }, 120_000);

  afterAll(async () => {
    await Promise.all(children.map((c) => c.stop()));
    await pair?.dispose();
  });

  const spawnNew = async (): Promise<ChildTicketd> => {
    const child = await spawnTicketd(pair.backendsUrl);
    children.push(child);
    return child;
  };
  const spawnOld = async (): Promise<ChildTicketd> => {
    const child = await spawnTicketd(pair.backendsUrl, {}, (built as { main: string }).main);
    children.push(child);
    return child;
  };

  it('0.3.0 issues nothing from an opaque sequence created and used under load by two new front ends, and keeps serving ordered ones', async () => {
    if ('unavailable' in built) return;
    const [old, n1, n2] = [await spawnOld(), await spawnNew(), await spawnNew()];
    expect(await putSequence(n1.url, 'invoices', OPAQUE)).toBe(201);
    const ledger = new IdLedger();
    const load = startLoad(
      ledger,
      [
        { url: n1.url, name: 'new-1' },
        { url: n2.url, name: 'new-2' },
      ],
      'invoices',
      6,
    );
    const fromOld = hammer(old.url, 'invoices');
    await sleep(5000);
    await load.stop();
    const oldAnswers = await fromOld.stop();

    expect(ledger.repeats).toEqual([]);
    expect(ledger.acknowledged).toBeGreaterThan(1000);
    // 0.3.0 reads the decoy row (maxId 0): every block lies above it.
    expect(oldAnswers.served).toBe(0);
    expect([...oldAnswers.statuses.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(10);
    // Nor can it take the name over as an ordered sequence.
    expect(await putSequence(old.url, 'invoices', { blockSize: 100, maxId: '2147483647' })).toBe(409);
    // Ordered sequences go on working on both versions during the upgrade.
    for (const url of [old.url, n1.url]) {
      const res = await fetch(`${url}/v1/sequences/default/ids?count=5`, { method: 'POST' });
      expect(`${res.status} ${await res.text()}`).toMatch(/^200 /);
    }
  }, 60_000);

  it('0.3.0, which loaded an INT sequence before it was widened, only stops at the old bound while this one serves past it; no ID twice', async () => {
    if ('unavailable' in built) return;
    const [old, fresh] = [await spawnOld(), await spawnNew()];
    const intMax = 2_147_483_647n;
    expect(
      await putSequence(fresh.url, 'narrow', { blockSize: 1000, startAfter: '2147000000', maxId: String(intMax) }),
    ).toBe(201);
    const ledger = new IdLedger();
    const drain = async (url: string, who: string): Promise<number> => {
      for (let i = 0; i < 400; i++) {
        const status = await ledger.request(url, who, 'narrow', 1000);
        if (status !== 200) return status;
      }
      return 200;
    };
    expect(await ledger.request(old.url, 'old', 'narrow', 10)).toBe(200);
    expect(await drain(fresh.url, 'new')).not.toBe(200);
    expect(await drain(old.url, 'old')).not.toBe(200);
    const patched = await fetch(`${fresh.url}/v1/sequences/narrow`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: '{"maxId":"9223372036854775807"}',
    });
    expect(patched.status).toBe(200);
    const oldAfter = [];
    for (let i = 0; i < 20; i++) oldAfter.push(await ledger.request(old.url, 'old', 'narrow', 1000));
    for (let i = 0; i < 20; i++) expect(await ledger.request(fresh.url, 'new', 'narrow', 1000)).toBe(200);
    const ids = [...ledger.ids()].map(BigInt);
    console.log(
      `old release beside a widening: 0.3.0 answered ${JSON.stringify(oldAfter.reduce<Record<number, number>>((m, st) => ({ ...m, [st]: (m[st] ?? 0) + 1 }), {}))} after it; ${ids.filter((id) => id > intMax).length} IDs past 2^31 − 1 from this version, ${ledger.repeats.length} repeated`,
    );
    // 0.3.0 holds the old bound: it stopped early, and never served an ID past it.
    expect(oldAfter.every((st) => st !== 200)).toBe(true);
    expect(ledger.repeats).toEqual([]);
    expect(ids.filter((id) => id > intMax)).toHaveLength(20_000);
  }, 60_000);

  it('0.3.0 and 0.7.0 refuse a strict sequence, which is gated for 0.10.0: not one ID from them', async () => {
    const seven = buildRelease('0.7.0');
    if ('unavailable' in seven || 'unavailable' in built) {
      console.log(
        `old-release test of strict sequences does not run: ${'unavailable' in seven ? seven.unavailable : 'no 0.3.0 build'}`,
      );
      return;
    }
    const fresh = await spawnNew();
    expect(await putSequence(fresh.url, 'in_order', { blockSize: 1, ids: 'strict' })).toBe(201);
    const olds = [await spawnOld(), await spawnTicketd(pair.backendsUrl, {}, seven.main)];
    children.push(olds[1]!);
    const answers = [];
    for (const old of olds) {
      const res = await fetch(`${old.url}/v1/sequences/in_order/ids?count=5`, { method: 'POST' });
      answers.push(`${res.status} ${((await res.json()) as { code?: string }).code}`);
    }
    console.log(`old releases beside a strict sequence: 0.3.0 and 0.7.0 answered ${answers.join(', ')}`);
    expect(answers[0]).not.toMatch(/^200/);
    expect(answers[1]).toBe('503 TICKETD_UPGRADE_REQUIRED');
    expect((await fetch(`${fresh.url}/v1/sequences/in_order/ids?count=5`, { method: 'POST' })).status).toBe(200);
  }, 60_000);

  it('0.7.0, which has never heard of retiring, stops issuing a sequence retired beside it once its cache is spent; no ID twice', async () => {
    const seven = buildRelease('0.7.0');
    if ('unavailable' in seven) {
      console.log(`old-release test of 0.7.0 does not run: ${seven.unavailable}`);
      return;
    }
    const old = await spawnTicketd(pair.backendsUrl, {}, seven.main);
    children.push(old);
    const fresh = await spawnNew();
    expect(await putSequence(fresh.url, 'short_lived', { blockSize: 10 })).toBe(201);
    const ledger = new IdLedger();
    const load = startLoad(
      ledger,
      [
        { url: old.url, name: 'old' },
        { url: fresh.url, name: 'new' },
      ],
      'short_lived',
      4,
    );
    await sleep(1500);
    const retired = await fetch(`${fresh.url}/v1/sequences/short_lived`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(retired.status).toBe(200);
    const ticketsAtRetire = await Promise.all([pair.a.url, pair.b.url].map((url) => lastTicketOf(url, 'short_lived')));
    const servedAtRetire = ledger.servedBy('old');
    await sleep(3000);
    await load.stop();
    const servedAfter = ledger.servedBy('old') - servedAtRetire;
    const ticketsAfter = await Promise.all([pair.a.url, pair.b.url].map((url) => lastTicketOf(url, 'short_lived')));
    console.log(
      `0.7.0 beside a retirement: it served ${servedAfter} IDs after DELETE answered (what it had cached); last tickets taken at DELETE ${ticketsAtRetire.join(', ')}, 3 s later ${ticketsAfter.join(', ')}; ${ledger.unique} IDs in all, ${ledger.repeats.length} repeated`,
    );
    // No backend gave anyone a ticket after DELETE: what 0.7.0 served since was its cache (blocks of 10).
    expect(ticketsAfter).toEqual(ticketsAtRetire);
    expect(ticketsAtRetire.every((t) => t > 0n)).toBe(true);
    // Every ID anyone served, after DELETE too, lies in a block of a ticket taken before it.
    const lastTicket = ticketsAtRetire.reduce((m, t) => (t > m ? t : m), 0n);
    expect([...ledger.ids()].filter((id) => BigInt(id) / 10n > lastTicket)).toEqual([]);
    expect(ledger.repeats).toEqual([]);
    expect((await fetch(`${fresh.url}/v1/sequences/short_lived/next`)).status).toBe(410);
  }, 120_000);

  it('init gates an opaque sequence an earlier version left readable; a 0.3.0 that loaded it can take no more tickets', async () => {
    if ('unavailable' in built) return;
    const [old, n1] = [await spawnOld(), await spawnNew()];
    expect(await putSequence(n1.url, 'made_by_0_5', OPAQUE)).toBe(201);
    // As ticketd 0.5 stored it: its settings in ticketd_sequences, readable by any version.
    for (const url of [pair.a.url, pair.b.url]) {
      await sqlOn(
        url,
        "UPDATE ticketd_sequences s JOIN ticketd_gated_sequences g ON g.name = s.name SET s.block_size = g.block_size, s.start_after = g.start_after, s.max_id = g.max_id WHERE s.name = 'made_by_0_5'",
        "DELETE FROM ticketd_gated_sequences WHERE name = 'made_by_0_5'",
      );
    }
    // The hazard itself, once: 0.3.0 serves an ungated opaque sequence as an ordered one.
    const before = await fetch(`${old.url}/v1/sequences/made_by_0_5/ids?count=10`, { method: 'POST' });
    expect(before.status).toBe(200);

    const check = await runCliAsync(['check'], { TICKETD_BACKENDS: pair.backendsUrl });
    expect(check.stdout + check.stderr).toMatch(
      /sequence made_by_0_5 on backend .* is not gated: ticketd 0\.3 and older would serve its IDs unpermuted; run npx ticketd init/,
    );
    const init = await runCliAsync(['init'], { TICKETD_BACKENDS: pair.backendsUrl });
    expect(init.status).toBe(0);
    expect(init.stdout).toMatch(
      /schema ready, identity [0-9a-f-]+; now out of reach of ticketd 0\.5 and older: made_by_0_5/,
    );

    // What 0.3.0 had cached may still go out; no new ticket does.
    let servedAfter = 0;
    let refusedAt = -1;
    for (let i = 0; i < 200 && refusedAt < 0; i++) {
      const res = await fetch(`${old.url}/v1/sequences/made_by_0_5/ids?count=50`, { method: 'POST' });
      if (res.status === 200) servedAfter += ((await res.json()) as { ids: string[] }).ids.length;
      else refusedAt = i;
    }
    expect(refusedAt).toBeGreaterThanOrEqual(0);
    expect(servedAfter).toBeLessThan(2000);
    expect(old.logs.join('\n')).toMatch(/Unknown column 'stub'/);
    // This version serves it, gated, on and on.
    for (let i = 0; i < 30; i++)
      expect((await fetch(`${n1.url}/v1/sequences/made_by_0_5/ids?count=100`, { method: 'POST' })).status).toBe(200);
  }, 60_000);

  it('a sequence or a backend that needs a later ticketd is refused, naming the version', async () => {
    if ('unavailable' in built) return;
    for (const url of [pair.a.url, pair.b.url])
      await sqlOn(url, "UPDATE ticketd_gated_sequences SET needs_version = '9.0.0' WHERE name = 'invoices'");
    const fresh = await spawnNew();
    const res = await fetch(`${fresh.url}/v1/sequences/invoices/ids?count=1`, { method: 'POST' });
    expect(res.status).toBe(503);
    const problem = (await res.json()) as { code: string; detail: string };
    expect(problem.code).toBe('TICKETD_UPGRADE_REQUIRED');
    expect(problem.detail).toContain(`sequence invoices needs ticketd 9.0.0 or later; this process is ${THIS_VERSION}`);
    // Nor does it create or re-key it (its key and settings may mean what this version cannot tell),
    // and the backends stay in use for every other sequence.
    const put = await fetch(`${fresh.url}/v1/sequences/invoices`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(OPAQUE),
    });
    expect(put.status).toBe(503);
    expect(((await put.json()) as { detail: string }).detail).toMatch(
      /^sequence invoices on mysql:\/\/\S+ needs ticketd 9\.0\.0 or later; this process is \d+\.\d+\.\d+ and leaves it as it is$/,
    );
    expect((await fetch(`${fresh.url}/v1/sequences/default/ids?count=5`, { method: 'POST' })).status).toBe(200);

    await sqlOn(pair.a.url, "UPDATE ticketd_schema SET needs_version = '9.0.0'");
    const check = await runCliAsync(['check'], { TICKETD_BACKENDS: pair.backendsUrl });
    expect(check.status).not.toBe(0);
    expect(check.stdout + check.stderr).toMatch(
      new RegExp(
        `backend mysql://127\\.0\\.0\\.1:${pair.a.port}/ticketd needs ticketd 9\\.0\\.0 or later; this is ${THIS_VERSION}`,
      ),
    );
    // A running process checks every new connection: once A's are gone it refuses A and serves from B.
    await killConnections(pair.a.url);
    for (let i = 0; i < 20; i++)
      expect((await fetch(`${fresh.url}/v1/sequences/default/ids?count=100`, { method: 'POST' })).status).toBe(200);
    const status = (await (
      await fetch(`${fresh.url}/v1/sequences/default`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })
    ).json()) as object;
    expect(JSON.stringify(status)).toContain('needs ticketd 9.0.0 or later');
  }, 60_000);

  it('refuses to create an opaque sequence on a backend whose schema predates the gate, until init', async () => {
    if ('unavailable' in built) return;
    const older = await startPrivatePair();
    try {
      // The schema of 0.5: no ticketd_gated_sequences, no ticketd_schema.
      for (const url of [older.a.url, older.b.url])
        await sqlOn(url, 'DROP TABLE ticketd_gated_sequences', 'DROP TABLE ticketd_schema');
      const fresh = await spawnTicketd(older.backendsUrl);
      children.push(fresh);
      const refused = await fetch(`${fresh.url}/v1/sequences/too_early`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(OPAQUE),
      });
      expect(refused.status).toBe(503);
      const problem = (await refused.json()) as { code: string; detail: string };
      expect(problem.code).toBe('TICKETD_SCHEMA_OUTDATED');
      expect(problem.detail).toMatch(
        /has the schema of a ticketd older than 0\.6\.0, which cannot keep sequence too_early from it; run npx ticketd init, then repeat$/,
      );
      // Ordered sequences are created and served on such a backend as before.
      expect(await putSequence(fresh.url, 'still_ordered', { blockSize: 10 })).toBe(201);
      expect((await runCliAsync(['init'], { TICKETD_BACKENDS: older.backendsUrl })).status).toBe(0);
      expect(await putSequence(fresh.url, 'too_early', OPAQUE)).toBe(201);
    } finally {
      await older.dispose();
    }
  }, 60_000);
});
