/**
 * Giving unused IDs back and reusing them (docs/uniqueness.md, "Giving ranges back"), on both
 * engines: a front end that stops cleanly gives its cache back and another serves those IDs; a
 * client's leased block is given back over HTTP (a forged or repeated return refused); and the
 * claim holds under its faults: two front ends racing for the same ranges, the claiming process
 * killed (-9) half-way, the holding backend restored from a backup taken before the claims, and a
 * peer down. Every ID any front end served is recorded; none may repeat.
 */
import mysql, { type RowDataPacket } from 'mysql2/promise';
import { createTicketClient, type TicketClientEvent } from 'ticketd-client';
import type { RunningTicketd } from '../../src/server.js';
import { describeEachEngine } from '../support/engines.js';
import { IdLedger, sleep } from '../support/id-ledger.js';
import { putSequence, spawnTicketd, startInProcess, startPrivatePair, TEST_ADMIN_TOKEN } from '../support/ticketd.js';

const BLOCK = 100n;

/** Rows of a query on a local server, as root. */
async function query(serverUrl: string, sql: string): Promise<RowDataPacket[]> {
  const conn = await mysql.createConnection({ uri: serverUrl, supportBigNumbers: true, bigNumberStrings: true });
  try {
    return (await conn.query<RowDataPacket[]>(sql))[0];
  } finally {
    await conn.end();
  }
}

/** The returned ranges of a sequence on a server, as [first, last] pairs. */
async function returnedRows(serverUrl: string, sequence: string): Promise<[bigint, bigint][]> {
  const rows = await query(
    serverUrl,
    `SELECT first_id, last_id FROM ticketd_returned_ranges WHERE sequence = '${sequence}' ORDER BY last_id`,
  );
  return rows.map((r) => [BigInt(String(r.first_id)), BigInt(String(r.last_id))]);
}

async function countOf(serverUrl: string, sql: string): Promise<number> {
  return Number((await query(serverUrl, sql))[0]!.n);
}

/** Leases a block and gives its tail back from first + kept; returns the lease's answer and the return's status. */
async function leaseAndReturn(
  url: string,
  sequence: string,
  kept: bigint,
): Promise<{ first: bigint; last: bigint; lease: string; status: number }> {
  const leased = (await (await fetch(`${url}/v1/sequences/${sequence}/blocks`, { method: 'POST' })).json()) as {
    first: string;
    last: string;
    lease: string;
  };
  const status = await giveBack(url, sequence, leased.lease, BigInt(leased.first) + kept);
  return { first: BigInt(leased.first), last: BigInt(leased.last), lease: leased.lease, status };
}

async function giveBack(url: string, sequence: string, lease: string, from: bigint): Promise<number> {
  const res = await fetch(`${url}/v1/sequences/${sequence}/blocks/return`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ lease, from: String(from) }),
  });
  await res.text();
  return res.status;
}

/** True when an ordered ID lies in one of the ranges. */
const inside = (ranges: readonly [bigint, bigint][], id: bigint): boolean =>
  ranges.some(([f, l]) => id >= f && id <= l);

describeEachEngine('giving unused IDs back', (engine) => {
  let pair: Awaited<ReturnType<typeof startPrivatePair>>;
  let admin: RunningTicketd;
  const open: RunningTicketd[] = [];

  /** A front end of this test's own, closed after every case. */
  const frontEnd = async (): Promise<RunningTicketd> => {
    const s = await startInProcess(pair.backendsUrl);
    open.push(s);
    return s;
  };

  beforeAll(async () => {
    pair = await startPrivatePair(engine.binary);
    admin = await startInProcess(pair.backendsUrl);
  }, 120_000);

  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  afterAll(async () => {
    await admin?.close();
    await pair?.dispose();
  });

  it('a serve process stopped by SIGTERM gives its opaque cache back, and another front end serves those IDs', async () => {
    expect(await putSequence(admin.url, 'gb_opaque', { blockSize: Number(BLOCK), ids: 'opaque' })).toBe(201);
    const ledger = new IdLedger();
    // A `serve` process stopped as systemd and Kubernetes stop one: SIGTERM, a drain, exit 0.
    const first = await spawnTicketd(pair.backendsUrl);
    expect(await ledger.request(first.url, 'first', 'gb_opaque', 10)).toBe(200);
    await sleep(200);
    const described = await fetch(`${first.url}/v1/sequences/gb_opaque`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    const held = ((await described.json()) as { cache: { available: number } }).cache.available;
    expect(await first.stop('SIGTERM')).toBe(0);
    const returned = [
      ...(await returnedRows(pair.a.url, 'gb_opaque')),
      ...(await returnedRows(pair.b.url, 'gb_opaque')),
    ];
    const returnedIds = returned.reduce((n, [f, l]) => n + Number(l - f + 1n), 0);
    const second = await frontEnd();
    for (let i = 0; i < 6; i++) expect(await ledger.request(second.url, 'second', 'gb_opaque', 50)).toBe(200);
    const ordered = await Promise.all([...ledger.ids()].map((id) => second.service.decode('gb_opaque', BigInt(id))));
    const fromReturned = ordered.filter((d) => inside(returned, d.ordered)).length;
    console.log(
      `[${engine.name}] clean stop: ${held} IDs cached, ${returnedIds} given back in ${returned.length} ranges; the next front end served ${fromReturned} of them; ${ledger.unique} IDs, ${ledger.repeats.length} repeated`,
    );
    expect(returnedIds).toBeGreaterThanOrEqual(held);
    expect(returnedIds).toBeGreaterThan(0);
    expect(fromReturned).toBe(returnedIds);
    expect(
      await countOf(pair.a.url, "SELECT COUNT(*) AS n FROM ticketd_returned_ranges WHERE sequence = 'gb_opaque'"),
    ).toBe(0);
    expect(ledger.repeats).toEqual([]);
  }, 60_000);

  it('a client gives a leased block back over HTTP; a forged or repeated return is refused', async () => {
    // An ordered sequence that opted in (an opaque one leases blocks only to its own client tokens).
    expect(await putSequence(admin.url, 'gb_lease', { blockSize: Number(BLOCK), reuse: true })).toBe(201);
    const { first, last, lease, status } = await leaseAndReturn(admin.url, 'gb_lease', 30n);
    expect(status).toBe(200);
    expect(await giveBack(admin.url, 'gb_lease', lease, first + 40n)).toBe(409);
    const forged = lease.replace(/^v1\.\d+\./, `v1.${first - 100n}.`);
    expect(await giveBack(admin.url, 'gb_lease', forged, first - 100n)).toBe(403);
    expect(await giveBack(admin.url, 'gb_lease', `${lease.slice(0, -2)}AA`, first + 50n)).toBe(403);
    expect(await giveBack(admin.url, 'gb_lease', lease, last + 1n)).toBe(400);
    const served = await frontEnd();
    const ledger = new IdLedger();
    for (let i = 0; i < 3; i++) await ledger.request(served.url, 'served', 'gb_lease', 70);
    const ordered = [...ledger.ids()].map(BigInt);
    const reused = ordered.filter((id) => id >= first + 30n && id <= last).length;
    expect(reused).toBe(Number(last - first - 30n + 1n));
    // The IDs the client kept are never served by anyone else.
    expect(ordered.some((id) => id >= first && id < first + 30n)).toBe(false);
    expect(ledger.repeats).toEqual([]);
  }, 60_000);

  it('the Node client gives its unused leased IDs back on close(), and a front end serves them', async () => {
    expect(await putSequence(admin.url, 'gb_client', { blockSize: Number(BLOCK), reuse: true })).toBe(201);
    const events: TicketClientEvent[] = [];
    const client = createTicketClient({
      urls: [admin.url],
      sequence: 'gb_client',
      prefetchBelowRatio: 0.9,
      onEvent: (e) => events.push(e),
    });
    const ledger = new IdLedger();
    for (const id of await client.nextBatch(25)) ledger.record(String(id), 'client');
    await client.close();
    const returned = [
      ...(await returnedRows(pair.a.url, 'gb_client')),
      ...(await returnedRows(pair.b.url, 'gb_client')),
    ];
    // close() told of each block it gave back, and what it told is what the backends hold.
    expect(events.length).toBeGreaterThan(0);
    expect(events.map((e) => e.type)).toEqual(events.map(() => 'returned'));
    expect(events.map((e) => [e.first, e.last]).sort((x, y) => (x[0]! < y[0]! ? -1 : 1))).toEqual(
      returned.map(([f, l]) => [f, l]).sort((x, y) => (x[0]! < y[0]! ? -1 : 1)),
    );
    expect(events.reduce((n, e) => n + e.count, 0n)).toBe(returned.reduce((n, [f, l]) => n + l - f + 1n, 0n));
    const handed = [...ledger.ids()].map(BigInt);
    // Every ID from the 26th of its block on came back, and none it handed out.
    expect(returned.length).toBeGreaterThan(0);
    expect(handed.some((id) => inside(returned, id))).toBe(false);
    const highest = handed.reduce((m, id) => (id > m ? id : m), 0n);
    expect(returned.some(([f]) => f === highest + 1n)).toBe(true);
    const served = await frontEnd();
    for (let i = 0; i < 4; i++) await ledger.request(served.url, 'served', 'gb_client', 50);
    const reused = [...ledger.ids()].map(BigInt).filter((id) => inside(returned, id)).length;
    expect(reused).toBe(returned.reduce((n, [f, l]) => n + Number(l - f + 1n), 0));
    expect(ledger.repeats).toEqual([]);
  }, 60_000);

  it('the Node client reports what it could not give back: a return-failed event per block, its IDs a gap', async () => {
    expect(await putSequence(admin.url, 'gb_unreached', { blockSize: Number(BLOCK), reuse: true })).toBe(201);
    const gone = await startInProcess(pair.backendsUrl);
    const events: TicketClientEvent[] = [];
    const client = createTicketClient({
      urls: [gone.url],
      sequence: 'gb_unreached',
      giveBackTimeoutMs: 500,
      onEvent: (e) => events.push(e),
    });
    const handed = await client.nextBatch(5);
    // The only front end it knows is gone before it closes.
    await gone.close();
    await client.close();
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) {
      expect(e.type).toBe('return-failed');
      if (e.type !== 'return-failed') continue;
      expect(e.count).toBe(e.last - e.first + 1n);
      expect(e.error).toContain('no ticketd took back IDs');
    }
    const highest = handed.reduce((m, id) => (id > m ? id : m), 0n);
    expect(events.some((e) => e.first === highest + 1n)).toBe(true);
    // Nothing of it was recorded: those IDs are a gap, never served again.
    expect([
      ...(await returnedRows(pair.a.url, 'gb_unreached')),
      ...(await returnedRows(pair.b.url, 'gb_unreached')),
    ]).toEqual([]);
  }, 60_000);
});
