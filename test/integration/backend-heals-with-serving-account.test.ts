/**
 * A backend back from a crash, and one restored from a dump older than the IDs handed out, are used
 * again by two running `ticketd serve` processes within 30 s, with only the serving account of
 * docs/production.md (SELECT, INSERT, DELETE): the lagging or regressed counter is moved forward
 * without ALTER. Under load, no ID twice, no restart. Then /readyz and the status page of each
 * front end agree with each other and with the backend rows within 10 s.
 */
import mysql, { type RowDataPacket } from 'mysql2/promise';
import { REGRESSION_GAP_TICKETS } from '../../src/core/counters.js';
import type { LocalPair } from '../../src/launcher/local-pair.js';
import { SERVING_GRANTS, withAccount as as } from '../support/accounts.js';
import { describeEachEngine } from '../support/engines.js';
import { IdLedger, sleep, startLoad } from '../support/id-ledger.js';
import { restoreBackup, takeBackup } from '../support/regressions.js';
import { frontEndStatus, statusDisagreement } from '../support/status-views.js';
import {
  postIds,
  putSequence,
  spawnTicketd,
  sqlOn,
  startInProcess,
  startPrivatePair,
  type ChildTicketd,
} from '../support/ticketd.js';

const SEQUENCE = 'heals';
const BLOCK_SIZE = 10n;
/** Backend A's tickets: offset 1 of 16 (sql/backend-a.cnf). */
const INCREMENT = 16n;
const A_OFFSET = 1n;
const RECOVERY_LIMIT_S = 30;
const STATUS_LIMIT_MS = 10_000;

/** The ticket an ID's block belongs to. */
const ticketOf = (id: string): bigint => BigInt(id) / BLOCK_SIZE;

/** Whose ticket an ID's block is: A's when the ticket lies in A's residue class. */
const fromA = (id: string): boolean => ticketOf(id) % INCREMENT === A_OFFSET;

/** A ledger that also notes, per front end, when it last acknowledged an ID of a ticket of A, and that ticket. */
class WatchedLedger extends IdLedger {
  readonly lastFromA = new Map<string, { at: number; ticket: bigint }>();

  override record(id: string, who: string): void {
    super.record(id, who);
    if (fromA(id)) this.lastFromA.set(who, { at: Date.now(), ticket: ticketOf(id) });
  }

  /**
   * Seconds from `since` until every named front end served an ID of a ticket of A above
   * `aboveTicket` (one A issued after `since`, not one cached before), or undefined past the limit.
   */
  async waitForA(
    names: readonly string[],
    since: number,
    aboveTicket: bigint,
    limitS: number,
  ): Promise<Map<string, number> | undefined> {
    const firstAt = new Map<string, number>();
    const deadline = since + limitS * 1000;
    while (Date.now() < deadline && firstAt.size < names.length) {
      for (const n of names) {
        const last = this.lastFromA.get(n);
        if (!firstAt.has(n) && last !== undefined && last.at > since && last.ticket > aboveTicket)
          firstAt.set(n, last.at);
      }
      await sleep(50);
    }
    if (firstAt.size < names.length) return undefined;
    return new Map(names.map((n) => [n, (firstAt.get(n)! - since) / 1000]));
  }
}

/** Each front end's seconds, as printed. */
const spans = (seconds: Map<string, number> | undefined): string =>
  seconds === undefined
    ? `more than ${RECOVERY_LIMIT_S} s`
    : [...seconds.values()].map((s) => `${s.toFixed(1)} s`).join(' / ');

/** The counter's next value as SHOW CREATE TABLE has it. */
async function autoIncrement(url: string): Promise<bigint> {
  const conn = await mysql.createConnection(url);
  try {
    const [rows] = await conn.query<RowDataPacket[]>(`SHOW CREATE TABLE tickets_${SEQUENCE}`);
    const text = String(rows[0]?.['Create Table']);
    return BigInt(/AUTO_INCREMENT=(\d+)/.exec(text)?.[1] ?? '1');
  } finally {
    await conn.end();
  }
}

describeEachEngine('a backend heals with the serving account alone', (engine) => {
  let pair: LocalPair & { dispose(): Promise<void> };
  const frontEnds: ChildTicketd[] = [];
  const ledger = new WatchedLedger();
  let load: { stop(): Promise<void> } | undefined;
  const figures: string[] = [];

  const servers = (): { url: string; name: string }[] =>
    frontEnds.map((f, i) => ({ url: f.url, name: `front-end-${i + 1}` }));
  const names = (): string[] => servers().map((s) => s.name);

  beforeAll(async () => {
    pair = await startPrivatePair(engine.binary);
    const roots = pair.backendsUrl.split(',');
    for (const url of roots) await sqlOn(url, ...SERVING_GRANTS);
    // The sequence is the admin's to create (CREATE, ALTER); the front ends never get that account.
    const admin = await startInProcess(pair.backendsUrl);
    expect(await putSequence(admin.url, SEQUENCE, { blockSize: Number(BLOCK_SIZE) })).toBe(201);
    await admin.close();
    const serving = roots.map((u) => as(u, 'tk_serve', 'serve-pass')).join(',');
    for (let i = 0; i < 2; i++) frontEnds.push(await spawnTicketd(serving));
    load = startLoad(ledger, servers(), SEQUENCE, 4);
    await sleep(2000);
  }, 120_000);

  afterAll(async () => {
    await load?.stop();
    for (const f of frontEnds) await f.stop();
    await pair.dispose();
    console.log(`backend heals [${engine.name}]: ${figures.join('; ')}`);
  });

  /** Both front ends' /readyz and status pages agree with each other and the backend rows, A up, within 10 s. */
  const expectStatusAgrees = async (what: string): Promise<void> => {
    const started = Date.now();
    let problem: string | undefined = 'not asked';
    while (problem !== undefined && Date.now() - started < STATUS_LIMIT_MS) {
      const views = await Promise.all(frontEnds.map((f) => frontEndStatus(f.url)));
      problem = statusDisagreement(views, [['up'], ['up']]);
      if (problem !== undefined) await sleep(250);
    }
    figures.push(`${what}: status pages and /readyz agree after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(problem).toBeUndefined();
  };

  it('A killed -9 and restarted is used again within 30 s, its counter caught up without ALTER', async () => {
    const aAtKill = await autoIncrement(pair.a.url);
    pair.a.signal('SIGKILL');
    await pair.a.exited();
    // The fault took hold: A's process is gone, and B alone serves.
    expect(pair.a.pid).toBeUndefined();
    const okBefore = ledger.statuses.get(200) ?? 0;
    await sleep(4000);
    expect((ledger.statuses.get(200) ?? 0) - okBefore).toBeGreaterThan(20);
    // Meanwhile every front end says so alike: A down with its error's time, never OK.
    const during = await Promise.all(frontEnds.map((f) => frontEndStatus(f.url)));
    expect(statusDisagreement(during, [['open', 'half-open', 'down'], ['up']])).toBeUndefined();
    for (const v of during) expect(v.page.overall).toBe('degraded');
    const bAtRestart = await autoIncrement(pair.b.url);
    await pair.a.restart();
    const restartedAt = Date.now();
    // A ticket above A's counter at the kill is one it issued after its return.
    const seconds = await ledger.waitForA(names(), restartedAt, aAtKill, RECOVERY_LIMIT_S);
    const lag = (bAtRestart - aAtKill) / INCREMENT;
    figures.push(`kill -9: A was ${lag} tickets behind B; used again by the two front ends after ${spans(seconds)}`);
    // More than the 64 tickets that make a returning backend's counter be caught up.
    expect(lag).toBeGreaterThan(64n);
    expect(seconds).toBeDefined();
    expect(ledger.repeats).toEqual([]);
    // Caught up, not merely used: A's counter moved past where B's stood before A came back.
    expect(await autoIncrement(pair.a.url)).toBeGreaterThan(bAtRestart);
    for (const f of frontEnds) expect(f.process.exitCode).toBeNull();
    await expectStatusAgrees('kill -9');
  }, 90_000);

  it('A restored from a dump older than the IDs handed out is used again within 30 s, no ID twice', async () => {
    const backup = await takeBackup(pair.a.url);
    const restoredTo =
      BigInt(/AUTO_INCREMENT=(\d+)/.exec(backup.find((t) => t.table === `tickets_${SEQUENCE}`)!.create)?.[1] ?? '1') -
      1n;
    // A's tickets are the odd ones (offset 1 of 16; B's, offset 2, are even). Load goes on until
    // IDs of tickets A issued after the dump have been handed out: the dump is then older than them.
    const servedOfA = (): bigint => ledger.highestTicket(BLOCK_SIZE, A_OFFSET % 2n);
    for (let i = 0; i < 300 && servedOfA() <= restoredTo + 4n * INCREMENT; i++) await sleep(100);
    await sleep(1000);
    const served = servedOfA();
    const restoring = Date.now();
    await restoreBackup(pair.a.url, backup);
    const restored = Date.now();
    // Timed from the restore's end: A's tickets past every used one plus the gap (core/counters.ts)
    // come only after ticketd advanced its counter; the load alone moves it far less meanwhile.
    const seconds = await ledger.waitForA(
      names(),
      restored,
      served + REGRESSION_GAP_TICKETS * INCREMENT,
      RECOVERY_LIMIT_S,
    );
    figures.push(
      `restore (${((restored - restoring) / 1000).toFixed(1)} s): A went back to ticket ${restoredTo}, below ${served} served; used again by the two front ends ${spans(seconds)} after it ended`,
    );
    // The restore took hold: the dump's counter lies below tickets of A already handed out.
    expect(restoredTo).toBeLessThan(served);
    expect(seconds).toBeDefined();
    await sleep(2000);
    expect(ledger.repeats).toEqual([]);
    for (const f of frontEnds) expect(f.process.exitCode).toBeNull();
    // Nothing the serving account ran was refused (start-up's info on the admin's features aside).
    const refused = frontEnds.flatMap((f) =>
      f.logs.filter((l) => /missing privilege|command denied/.test(l) && !/"level":30/.test(l)),
    );
    expect(refused).toEqual([]);
    await expectStatusAgrees('restore');
    figures.push(`${ledger.acknowledged} IDs acknowledged, ${ledger.repeats.length} repeated`);
  }, 90_000);
  it('a refused backend never shows OK, its error carries its time, and a GRANT shows within 10 s', async () => {
    const [aRoot, bRoot] = pair.backendsUrl.split(',') as [string, string];
    // The trial's short account on A: no DELETE, so no REPLACE.
    await sqlOn(
      aRoot,
      "CREATE USER IF NOT EXISTS 'tk_short'@'%' IDENTIFIED BY 'short-pass'",
      "GRANT SELECT, INSERT ON ticketd.* TO 'tk_short'@'%'",
    );
    const server = await startInProcess(
      `${as(aRoot, 'tk_short', 'short-pass')},${as(bRoot, 'tk_serve', 'serve-pass')}`,
    );
    try {
      for (let i = 0; i < 50 && server.service.backendStatus()[0]!.state !== 'refused'; i++)
        await postIds(server.url, SEQUENCE, 100).catch(() => undefined);
      // The fault took hold: A refused, B serving.
      expect(server.service.backendStatus().map((b) => b.state)).toEqual(['refused', 'up']);
      await sleep(3000);
      const refused = await frontEndStatus(server.url);
      expect(statusDisagreement([refused], [['refused'], ['up']])).toBeUndefined();
      expect(refused.page.overall).toBe('degraded');
      expect(refused.page.words).toMatch(/backend A refuses a statement its account may not run/);
      expect(refused.readyz.backends[0]!.lastError).toMatch(/DELETE command denied/);
      expect(Date.now() - Date.parse(refused.readyz.backends[0]!.lastErrorAt!)).toBeLessThan(10_000);
      await sqlOn(aRoot, "GRANT DELETE ON ticketd.* TO 'tk_short'@'%'");
      // No request needed: the page and /readyz say so within 10 s of the GRANT.
      const granted = Date.now();
      let problem: string | undefined = 'not asked';
      while (problem !== undefined && Date.now() - granted < STATUS_LIMIT_MS) {
        problem = statusDisagreement([await frontEndStatus(server.url)], [['up'], ['up']]);
        if (problem !== undefined) await sleep(250);
      }
      figures.push(`a GRANT shown within ${((Date.now() - granted) / 1000).toFixed(1)} s`);
      expect(problem).toBeUndefined();
      expect((await frontEndStatus(server.url)).page.overall).toBe('ok');
      // And A's tickets are served again, no restart.
      let servedFromA = false;
      for (let i = 0; i < 100 && !servedFromA; i++)
        servedFromA = (await postIds(server.url, SEQUENCE, 1000)).some(fromA);
      expect(servedFromA).toBe(true);
    } finally {
      await server.close();
    }
  }, 90_000);
});
