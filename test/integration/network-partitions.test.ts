/**
 * Network partitions between containers: backends A and B and two front ends on a Docker network,
 * packets dropped with iptables in a container's own network namespace (not a kill, not a pause:
 * connections half-open and packets vanish). Under load from HTTP clients and SDK clients, each
 * scenario first proves its partition holds (a connection from the cut side times out), then
 * judges what ticketd did: no ID served twice, no worker ID held twice, and how long it stalled.
 * For a strict sequence (over three front ends), the linearizability checker judges real-time order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTicketClient } from 'ticketd-client';
import { cut, dockerReady, heal, probeConnect, requireDockerInCi, run } from '../support/docker.js';
import { startDockerFleet, type DockerFleet, type FleetBackend, type FleetFrontEnd } from '../support/docker-fleet.js';
import { IdLedger, sleep, startLoad } from '../support/id-ledger.js';
import { checkLinearizable, describeVerdict } from '../support/linearizability.js';
import {
  overlappingLeases,
  readLeaseFiles,
  repeatedIds,
  spawnHolder,
  type Holder,
} from '../support/snowflake-fleet.js';
import { longestGap, strictLoad } from '../support/strict-load.js';
import { putSequence } from '../support/ticketd.js';
import { poolName, putPool } from '../support/worker-pools.js';

requireDockerInCi('network partitions');

/** Small blocks, so refills (and claims) go on all through a partition. */
const BLOCK_SIZE = 50n;
const INCREMENT = 16n;
const CUT_MS = 8000;

(dockerReady ? describe : describe.skip)('network partitions between containers', () => {
  let fleet: DockerFleet;
  let a: FleetBackend;
  let fe1: FleetFrontEnd;
  let fe2: FleetFrontEnd;
  /** Off the load: TICKETD_CLAIMS=required, for what it logs while every request it gets is refused. */
  let fe3: FleetFrontEnd;

  beforeAll(async () => {
    fleet = await startDockerFleet([{}, {}, { TICKETD_CLAIMS: 'required', TICKETD_LOG_LEVEL: 'info' }]);
    [a] = fleet.backends as [FleetBackend];
    [fe1, fe2, fe3] = fleet.frontEnds as [FleetFrontEnd, FleetFrontEnd, FleetFrontEnd];
  }, 240_000);

  afterAll(async () => {
    if (fleet !== undefined) for (const b of fleet.backends) heal(b.container.getId());
    await fleet?.close();
  }, 120_000);

  /** HTTP clients on both front ends and SDK clients failing over between them, into one ledger. */
  function load(sequence: string): { ledger: IdLedger; stop(): Promise<void> } {
    const ledger = new IdLedger();
    const http = startLoad(
      ledger,
      [
        { url: fe1.url, name: 'fe1' },
        { url: fe2.url, name: 'fe2' },
      ],
      sequence,
      6,
    );
    let running = true;
    const sdks = [
      [fe1.url, fe2.url],
      [fe2.url, fe1.url],
    ].map(async (urls, i) => {
      const client = createTicketClient({ urls, sequence, timeoutMs: 3000 });
      try {
        while (running) {
          try {
            ledger.record(String(await client.next()), `sdk-${i}`);
          } catch {
            await sleep(50);
          }
          if (ledger.acknowledged % 64 === 0) await sleep(1);
        }
      } finally {
        await client.close();
      }
    });
    return {
      ledger,
      stop: async () => {
        running = false;
        await Promise.all([http.stop(), ...sdks]);
      },
    };
  }

  /** The highest ticket of a backend's class among the IDs acknowledged so far. */
  function highestOf(ledger: IdLedger, offset: bigint): bigint {
    let top = 0n;
    for (const id of ledger.ids()) {
      const ticket = BigInt(id) / BLOCK_SIZE;
      if (ticket % INCREMENT === offset && ticket > top) top = ticket;
    }
    return top;
  }

  async function newSequence(prefix: string): Promise<string> {
    const name = `${prefix}_${process.pid}`;
    expect(await putSequence(fe1.url, name, { blockSize: Number(BLOCK_SIZE) })).toBe(201);
    return name;
  }

  /** Waits until a ticket of A above `above` is acknowledged: A serves again. */
  async function untilAServes(ledger: IdLedger, above: bigint, ms: number): Promise<number> {
    const started = Date.now();
    while (highestOf(ledger, 1n) <= above) {
      if (Date.now() - started > ms) throw new Error(`A served no new ticket within ${ms} ms of the heal`);
      await sleep(100);
    }
    return Date.now() - started;
  }

  function report(what: string, ledger: IdLedger, extra: string): void {
    console.log(
      `partition ${what}: ${ledger.unique} IDs served, ${ledger.repeats.length} repeated, longest stall ${Math.round(ledger.longestStallMs)} ms, statuses ${JSON.stringify(Object.fromEntries(ledger.statuses))}; ${extra}`,
    );
  }

  it('(a) one backend cut off from every front end, then healed: no repeat, A serves again, and a refusal on every request is logged once', async () => {
    const sequence = await newSequence('part_a');
    const run = load(sequence);
    await sleep(1500);
    cut(a.container.getId(), [fe1.ip, fe2.ip, fe3.ip]);
    const proof = await Promise.all([fe1, fe2, fe3].map((fe) => probeConnect(fe.container.getId(), a.ip, 3306)));
    expect(proof).toEqual(['timeout', 'timeout', 'timeout']);
    const beforeCut = run.ledger.unique;
    const aAtCut = highestOf(run.ledger, 1n);
    // fe3 needs a claim on A for every ticket of B: each of its refills fails while A is cut off.
    const required = new IdLedger();
    const warnedBefore = warnings(fe3).length;
    const refusedLoad = startLoad(required, [{ url: fe3.url, name: 'fe3' }], sequence, 4);
    await sleep(CUT_MS);
    await refusedLoad.stop();
    const servedDuringCut = run.ledger.unique - beforeCut;
    // Blocks of A taken before the cut may still be served; no new ticket of A can be.
    const aDuringCut = highestOf(run.ledger, 1n);
    heal(a.container.getId());
    const back = await untilAServes(run.ledger, aDuringCut, 30_000);
    await run.stop();
    report(
      '(a) A cut off from fe1 and fe2',
      run.ledger,
      `proof: fe1, fe2 and fe3 → A:3306 ${proof.join('/')}; ${servedDuringCut} IDs during the ${CUT_MS / 1000} s cut; A served again ${back} ms after the heal`,
    );
    const warned = warnings(fe3).slice(warnedBefore);
    const refused = required.statuses.get(503) ?? 0;
    console.log(
      `partition (a), TICKETD_CLAIMS=required front end: ${refused} answers 503 during the cut, ${warned.length} warning lines: ${JSON.stringify([...new Set(warned)])}`,
    );
    expect(run.ledger.repeats).toEqual([]);
    expect(servedDuringCut).toBeGreaterThan(1000);
    expect(aDuringCut).toBeGreaterThanOrEqual(aAtCut);
    // The fault repeated on every request; it was logged once per episode, not once per request.
    expect(refused).toBeGreaterThan(100);
    expect(warned.length).toBeLessThanOrEqual(6);
  }, 90_000);

  it('(b) asymmetric: fe1 cannot reach A while fe2 can; both keep serving, with no repeat', async () => {
    const sequence = await newSequence('part_b');
    const run = load(sequence);
    await sleep(1500);
    cut(a.container.getId(), [fe1.ip]);
    const proof = await Promise.all([
      probeConnect(fe1.container.getId(), a.ip, 3306),
      probeConnect(fe2.container.getId(), a.ip, 3306),
    ]);
    expect(proof).toEqual(['timeout', 'connected']);
    const aAtCut = highestOf(run.ledger, 1n);
    const fe1Before = run.ledger.servedBy('fe1');
    await sleep(CUT_MS);
    const aDuringCut = highestOf(run.ledger, 1n);
    const fe1During = run.ledger.servedBy('fe1') - fe1Before;
    heal(a.container.getId());
    await sleep(2000);
    await run.stop();
    report(
      '(b) fe1 cut off from A, fe2 not',
      run.ledger,
      `proof: fe1 → A:3306 ${proof[0]}, fe2 → A:3306 ${proof[1]}; fe1 served ${fe1During} IDs during the cut; A's newest ticket went from ${aAtCut} to ${aDuringCut} during it (through fe2)`,
    );
    expect(run.ledger.repeats).toEqual([]);
    expect(fe1During).toBeGreaterThan(500);
    // fe2 still took new tickets of A while fe1 could not.
    expect(aDuringCut).toBeGreaterThan(aAtCut);
  }, 90_000);

  it("(c) A loses its replies while it holds claims of B's tickets, then heals: claims resume, no repeat", async () => {
    const sequence = await newSequence('part_c');
    const run = load(sequence);
    await sleep(1500);
    // A still receives and commits (claims of B's tickets among them), but nothing it sends arrives.
    cut(a.container.getId(), [fe1.ip, fe2.ip], 'out');
    const proof = await probeConnect(fe1.container.getId(), a.ip, 3306);
    expect(proof).toBe('timeout');
    const claimsAtCut = await claimsOnA(sequence);
    await sleep(CUT_MS);
    const claimsDuringCut = await claimsOnA(sequence);
    const bDuringCut = highestOf(run.ledger, 2n);
    heal(a.container.getId());
    const back = await untilAServes(run.ledger, highestOf(run.ledger, 1n), 30_000);
    await sleep(1500);
    await run.stop();
    const claimsAfter = await claimsOnA(sequence);
    report(
      "(c) A's replies dropped",
      run.ledger,
      `proof: fe1 → A:3306 ${proof}; claims of B's tickets on A: ${claimsAtCut.count} at the cut, ${claimsDuringCut.count} at the heal, ${claimsAfter.count} after (highest ${claimsAfter.highest}); A served again ${back} ms after the heal`,
    );
    expect(run.ledger.repeats).toEqual([]);
    expect(claimsAtCut.count).toBeGreaterThan(0);
    // Claiming B's tickets on A went on after the heal.
    expect(claimsAfter.highest).toBeGreaterThan(bDuringCut);
  }, 90_000);

  it("(d) a worker ID's owner cut off from the front end its holders use: no worker ID held twice, no ID repeated, and B's holders never stop", async () => {
    const pool = poolName('part_d');
    expect((await putPool(fe1.url, pool, { workerBits: 3, ttlMs: 3000, maxSkewMs: 1000 })).status).toBe(201);
    const dir = mkdtempSync(join(tmpdir(), 'ticketd-partition-'));
    const holders: Holder[] = Array.from({ length: 6 }, (_, i) =>
      spawnHolder(dir, `h${i}`, pool, [fe1.url, fe2.url], { idsPerTick: 50 }),
    );
    try {
      await Promise.all(holders.map((h) => h.waitFor('leased', 20_000)));
      await sleep(1000);
      cut(a.container.getId(), [fe1.ip]);
      const proof = await probeConnect(fe1.container.getId(), a.ip, 3306);
      expect(proof).toBe('timeout');
      const cutAt = Date.now();
      await sleep(CUT_MS);
      heal(a.container.getId());
      await sleep(2000);
      const healedAt = Date.now();
      await Promise.all(holders.map((h) => h.stop()));
      const files = readLeaseFiles(dir);
      const { total, repeats } = repeatedIds(files);
      const overlaps = overlappingLeases(files);
      // Worker w belongs to owners[w mod 2]: A (offset 1) owns the even ones, B the odd ones.
      const ownedByB = holders.filter((h) => {
        const leased = h.events.filter((e) => e.type === 'leased' && e.at < cutAt);
        return leased.length > 0 && Number(leased[leased.length - 1]!.workerId) % 2 === 1;
      });
      const stops = (h: Holder): string[] =>
        h.events.filter((e) => e.type === 'error' && e.at >= cutAt && e.at <= healedAt).map((e) => String(e.code));
      const skewEvents = holders.flatMap((h) => h.events.filter((e) => e.type === 'skew'));
      console.log(
        `partition (d) A cut off from fe1 under its holders: proof fe1 → A:3306 ${proof}; ${total} Snowflake IDs over ${files.length} leases, ${repeats.length} repeated, ${overlaps.length} overlapping leases; holders of B's worker IDs: ${ownedByB.map((h) => `${h.name} stopped ${stops(h).length}×`).join(', ')}; others: ${holders
          .filter((h) => !ownedByB.includes(h))
          .map((h) => `${h.name} ${stops(h).length} refusals`)
          .join(', ')}; skew events ${skewEvents.length} ${JSON.stringify(skewEvents.map((e) => [e.name, e.skewMs]))}`,
      );
      // What each of B's holders saw from the cut to the heal, in ms from the cut: why one stopped, when one did.
      for (const h of ownedByB)
        console.log(
          `partition (d) ${h.name}: ${h.events
            .filter((e) => e.at >= cutAt && e.at <= healedAt && e.type !== 'renewed')
            .map((e) => `${e.type}@${e.at - cutAt}${e.type === 'error' ? `(${String(e.code)})` : ''}`)
            .join(', ')}`,
        );
      expect(repeats).toEqual([]);
      expect(overlaps).toEqual([]);
      expect(ownedByB.length).toBeGreaterThan(0);
      for (const h of ownedByB) expect([h.name, stops(h)]).toEqual([h.name, []]);
      expect(skewEvents).toEqual([]);
    } finally {
      await Promise.all(holders.map((h) => h.stop()));
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it("(e) a strict sequence's leader cut off from backend A: it stops serving, another front end leads, and every answer stays in real-time order", async () => {
    const sequence = await newStrictSequence('part_se');
    const load = strictLoad(sequence, () => new Map([fe1, fe2, fe3].map((fe) => [fe.name, fe.url])), {
      concurrency: 9,
    });
    await sleep(1500);
    const leader = await strictLeader(sequence, fe1);
    cut(a.container.getId(), [leader.ip]);
    const cutAt = performance.now();
    expect(await probeConnect(leader.container.getId(), a.ip, 3306)).toBe('timeout');
    await sleep(CUT_MS);
    const others = [fe1, fe2, fe3].filter((fe) => fe !== leader);
    const during = await strictLeader(sequence, others[0]!);
    heal(a.container.getId());
    const healedAt = performance.now();
    await sleep(2000);
    await load.stop();
    const verdict = checkLinearizable(load.history);
    const servedAfter = new Set(
      load.history.filter((o) => o.sentAt > cutAt + 4000 && o.answeredAt < healedAt).map((o) => o.via),
    );
    console.log(
      `partition (e), strict leader ${leader.name} cut off from A: ${describeVerdict(verdict)}; ${during.name} led during the cut; longest gap ${Math.round(longestGap(load.history, cutAt, healedAt))} ms; answered during the cut via ${[...servedAfter].join(', ')}; statuses ${JSON.stringify(load.statuses)}`,
    );
    expect(verdict.outOfOrder).toBe(0);
    expect(verdict.repeated).toEqual([]);
    expect(verdict.unsorted).toBe(0);
    // Without A the old leader has no majority: another front end took the lease, and served.
    expect(during).not.toBe(leader);
    expect(servedAfter.size).toBeGreaterThanOrEqual(2);
  }, 90_000);

  it("(f) a strict sequence's leader cut off from the other front ends: it goes on serving, they refuse (503) rather than guess, and serve again once healed", async () => {
    const sequence = await newStrictSequence('part_sf');
    const load = strictLoad(sequence, () => new Map([fe1, fe2, fe3].map((fe) => [fe.name, fe.url])), {
      concurrency: 9,
    });
    await sleep(1500);
    const leader = await strictLeader(sequence, fe1);
    const followers = [fe1, fe2, fe3].filter((fe) => fe !== leader);
    cut(
      leader.container.getId(),
      followers.map((fe) => fe.ip),
    );
    const cutAt = performance.now();
    expect(await probeConnect(followers[0]!.container.getId(), leader.ip, 8080)).toBe('timeout');
    await sleep(CUT_MS);
    heal(leader.container.getId());
    const healedAt = performance.now();
    await sleep(4000);
    await load.stop();
    const verdict = checkLinearizable(load.history);
    const cutOff = (o: { sentAt: number; answeredAt: number }): boolean =>
      o.sentAt > cutAt + 100 && o.answeredAt < healedAt;
    const leaderDuring = load.history.filter((o) => o.via === leader.name && cutOff(o)).length;
    const followersDuring = load.history.filter((o) => o.via !== leader.name && cutOff(o)).length;
    const followersAfter = load.history.filter((o) => o.via !== leader.name && o.sentAt > healedAt + 1000).length;
    console.log(
      `partition (f), strict leader ${leader.name} cut off from ${followers.map((f) => f.name).join(' and ')}: ${describeVerdict(verdict)}; during the cut ${leaderDuring} answers from the leader, ${followersDuring} from followers; ${followersAfter} from followers after the heal; statuses ${JSON.stringify(load.statuses)}`,
    );
    expect(verdict.outOfOrder).toBe(0);
    expect(verdict.repeated).toEqual([]);
    expect(verdict.unsorted).toBe(0);
    // The leader still holds its lease through the backends: nobody else may serve.
    expect(leaderDuring).toBeGreaterThan(0);
    expect(followersDuring).toBe(0);
    expect(load.statuses['503'] ?? 0).toBeGreaterThan(0);
    expect(followersAfter).toBeGreaterThan(0);
  }, 90_000);

  async function newStrictSequence(prefix: string): Promise<string> {
    const name = `${prefix}_${process.pid}`;
    expect(await putSequence(fe1.url, name, { blockSize: 1000, ids: 'strict' })).toBe(201);
    return name;
  }

  /** The front end that leads a strict sequence, as `via` reads it from the backends. */
  async function strictLeader(sequence: string, via: FleetFrontEnd): Promise<FleetFrontEnd> {
    const shown = (await (await fetch(`${via.url}/v1/sequences/${sequence}`)).json()) as {
      leader?: { url: string } | null;
    };
    const host = shown.leader === undefined || shown.leader === null ? undefined : new URL(shown.leader.url).hostname;
    const found = [fe1, fe2, fe3].find((fe) => fe.name === host);
    if (found === undefined)
      throw new Error(
        `${via.name} shows no leader of ${sequence} among the front ends: ${JSON.stringify(shown.leader)}`,
      );
    return found;
  }

  /** The messages of a front end's warning and error lines so far (pino levels 40 and up). */
  function warnings(frontEnd: FleetFrontEnd): string[] {
    return run('docker', ['logs', frontEnd.container.getId()])
      .split('\n')
      .flatMap((line) => {
        try {
          const entry = JSON.parse(line) as { level?: number; msg?: string };
          return (entry.level ?? 0) >= 40 ? [String(entry.msg)] : [];
        } catch {
          return [];
        }
      });
  }

  /** How many claims of B's tickets of the sequence A holds, and the highest. */
  async function claimsOnA(sequence: string): Promise<{ count: number; highest: bigint }> {
    const mysql = await import('mysql2/promise');
    const conn = await mysql.createConnection(a.hostUrl);
    try {
      const [rows] = await conn.query<import('mysql2').RowDataPacket[]>(
        'SELECT COUNT(*) AS n, COALESCE(MAX(ticket), 0) AS top FROM ticketd_claims WHERE sequence = ? AND MOD(ticket, 16) = 2',
        [sequence],
      );
      return { count: Number(rows[0]!.n), highest: BigInt(String(rows[0]!.top)) };
    } finally {
      await conn.end();
    }
  }
});
