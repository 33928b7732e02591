/**
 * The claim of a given-back range is exactly once or never (docs/uniqueness.md, "Giving ranges
 * back"), under its faults, on both engines: (a) two front ends racing for the same ranges, (b) the
 * claiming process killed (-9) in the middle of its claims, (c) the holding backend restored from a
 * backup taken before the claims (the rows come back), (d) a peer down (nothing is reused; fresh
 * tickets serve). Ranges are given back as clients do, over HTTP, 50 IDs each; every ID served is
 * recorded, and none may repeat.
 */
import mysql, { type RowDataPacket } from 'mysql2/promise';
import type { RunningTicketd } from '../../src/server.js';
import { describeEachEngine } from '../support/engines.js';
import { IdLedger, sleep } from '../support/id-ledger.js';
import { restoreBackup, takeBackup } from '../support/regressions.js';
import { putSequence, spawnTicketd, startInProcess, startPrivatePair } from '../support/ticketd.js';

const BLOCK = 100;
const KEPT = 50n;

async function count(serverUrl: string, sql: string): Promise<number> {
  const conn = await mysql.createConnection(serverUrl);
  try {
    return Number((await conn.query<RowDataPacket[]>(sql))[0][0]!.n);
  } finally {
    await conn.end();
  }
}

const rowsOf = (serverUrl: string, sequence: string): Promise<number> =>
  count(serverUrl, `SELECT COUNT(*) AS n FROM ticketd_returned_ranges WHERE sequence = '${sequence}'`);

/** Leases `n` blocks and gives each back from first + KEPT; returns the IDs given back, as [first, last]. */
async function giveBackBlocks(url: string, sequence: string, n: number): Promise<[bigint, bigint][]> {
  const ranges: [bigint, bigint][] = [];
  for (let i = 0; i < n; i++) {
    const leased = (await (await fetch(`${url}/v1/sequences/${sequence}/blocks`, { method: 'POST' })).json()) as {
      first: string;
      last: string;
      lease: string;
    };
    const from = BigInt(leased.first) + KEPT;
    const res = await fetch(`${url}/v1/sequences/${sequence}/blocks/return`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ lease: leased.lease, from: String(from) }),
    });
    if (res.status !== 200) throw new Error(`return answered ${res.status}: ${await res.text()}`);
    ranges.push([from, BigInt(leased.last)]);
  }
  return ranges;
}

/** How many of the ledger's IDs lie in the ranges. */
const reusedIn = (ledger: IdLedger, ranges: readonly [bigint, bigint][]): number =>
  [...ledger.ids()].map(BigInt).filter((id) => ranges.some(([f, l]) => id >= f && id <= l)).length;

describeEachEngine('a given-back range is reused once or never', (engine) => {
  let pair: Awaited<ReturnType<typeof startPrivatePair>>;
  let admin: RunningTicketd;
  const open: RunningTicketd[] = [];
  const frontEnd = async (): Promise<RunningTicketd> => {
    const s = await startInProcess(pair.backendsUrl);
    open.push(s);
    return s;
  };
  const create = async (sequence: string): Promise<void> => {
    expect(await putSequence(admin.url, sequence, { blockSize: BLOCK, reuse: true })).toBe(201);
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

  it('(a) two front ends racing for the same ranges', async () => {
    await create('race');
    const ranges = await giveBackBlocks(admin.url, 'race', 40);
    const [one, two] = [await frontEnd(), await frontEnd()];
    const ledger = new IdLedger();
    const client = async (s: RunningTicketd, who: string): Promise<void> => {
      for (let i = 0; i < 12; i++) await ledger.request(s.url, who, 'race', 100);
    };
    await Promise.all([client(one, 'one'), client(two, 'two'), client(one, 'one'), client(two, 'two')]);
    const reused = reusedIn(ledger, ranges);
    console.log(
      `[${engine.name}] race: ${ranges.length * 50} IDs given back, ${reused} served again (${ledger.unique} IDs in all, ${ledger.repeats.length} repeated); rows left on A ${await rowsOf(pair.a.url, 'race')}`,
    );
    expect(ledger.statuses.get(200)).toBe(48);
    expect(reused).toBeGreaterThan(0);
    expect(await rowsOf(pair.a.url, 'race')).toBe(0);
    expect(ledger.repeats).toEqual([]);
  }, 60_000);

  it('(b) the claiming process killed (-9) in the middle of its claims', async () => {
    await create('killed');
    const ranges = await giveBackBlocks(admin.url, 'killed', 240);
    const given = await rowsOf(pair.a.url, 'killed');
    const child = await spawnTicketd(pair.backendsUrl);
    const ledger = new IdLedger();
    expect(await ledger.request(child.url, 'killed', 'killed', 10)).toBe(200);
    // A request that claims range after range, 32 per look; killed once some are claimed, before all are.
    void ledger.request(child.url, 'killed', 'killed', 10_000);
    let left = given;
    for (let i = 0; i < 500 && left > given - 40; i++) {
      await sleep(5);
      left = await rowsOf(pair.a.url, 'killed');
    }
    child.process.kill('SIGKILL');
    await child.stop();
    const afterKill = await rowsOf(pair.a.url, 'killed');
    console.log(
      `[${engine.name}] kill -9: ${given} ranges given back; ${given - afterKill} claimed when killed (${child.process.signalCode}), ${afterKill} left`,
    );
    expect(child.process.signalCode).toBe('SIGKILL');
    expect(afterKill).toBeLessThan(given);
    expect(afterKill).toBeGreaterThan(0);
    const after = await frontEnd();
    for (let i = 0; i < 30 && (await rowsOf(pair.a.url, 'killed')) > 0; i++)
      expect(await ledger.request(after.url, 'after', 'killed', 1000)).toBe(200);
    expect(await rowsOf(pair.a.url, 'killed')).toBe(0);
    expect(reusedIn(ledger, ranges)).toBeGreaterThan(0);
    expect(ledger.repeats).toEqual([]);
  }, 60_000);

  it('(c) the holding backend restored from a backup taken before the claims', async () => {
    await create('restored');
    const ranges = await giveBackBlocks(admin.url, 'restored', 20);
    const backup = await takeBackup(pair.a.url);
    const ledger = new IdLedger();
    const first = await frontEnd();
    for (let i = 0; i < 12; i++) expect(await ledger.request(first.url, 'first', 'restored', 100)).toBe(200);
    const reusedBefore = reusedIn(ledger, ranges);
    expect(reusedBefore).toBe(ranges.length * 50);
    expect(await rowsOf(pair.a.url, 'restored')).toBe(0);
    await restoreBackup(pair.a.url, backup);
    // The fault took hold: every row given back is there again.
    expect(await rowsOf(pair.a.url, 'restored')).toBe(ranges.length);
    const second = await frontEnd();
    for (let i = 0; i < 12; i++) expect(await ledger.request(second.url, 'second', 'restored', 100)).toBe(200);
    console.log(
      `[${engine.name}] restore: ${ranges.length} ranges came back with A's backup; served again after it: ${reusedIn(ledger, ranges) - reusedBefore}; rows left ${await rowsOf(pair.a.url, 'restored')}; ${ledger.repeats.length} repeated`,
    );
    expect(reusedIn(ledger, ranges)).toBe(reusedBefore);
    expect(await rowsOf(pair.a.url, 'restored')).toBe(0);
    expect(ledger.repeats).toEqual([]);
  }, 60_000);

  it('(d) a peer down: nothing is reused, fresh tickets serve', async () => {
    await create('peerdown');
    const ranges = await giveBackBlocks(admin.url, 'peerdown', 10);
    await pair.b.stop();
    try {
      const lone = await frontEnd();
      const ledger = new IdLedger();
      for (let i = 0; i < 8; i++) expect(await ledger.request(lone.url, 'lone', 'peerdown', 100)).toBe(200);
      expect(reusedIn(ledger, ranges)).toBe(0);
      expect(await rowsOf(pair.a.url, 'peerdown')).toBe(ranges.length);
      expect(ledger.repeats).toEqual([]);
    } finally {
      await pair.b.restart();
    }
  }, 60_000);
});
