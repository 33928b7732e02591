/**
 * A lagging replica promoted behind backend A's address (what MHA/orchestrator-style failover does)
 * while three ticketd processes run: two busy, one idle since before the replica fell behind.
 * Every acknowledged ID is checked for repeats; the regression must be reported (metric and a
 * structured log line) within about one refill.
 */
import type { RunningTicketd } from '../../src/server.js';
import { sleep, startFleet, startLoad } from '../support/id-ledger.js';
import { startReplicatedBackends, type ReplicatedBackends } from '../support/regressions.js';
import { capturingLogger, regressionReports, startInProcess } from '../support/ticketd.js';

const SEQUENCE = 'promoted';
const BLOCK_SIZE = 10n;
const REPLICA_DELAY_S = 2;

describe('a lagging replica promoted behind backend A’s address', () => {
  let env: ReplicatedBackends;
  const servers: RunningTicketd[] = [];
  const logs = [capturingLogger(), capturingLogger(), capturingLogger()];

  beforeAll(async () => {
    env = await startReplicatedBackends(REPLICA_DELAY_S);
    for (const { logger } of logs) servers.push(await startInProcess(env.backendsUrl, {}, logger));
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await env?.dispose();
  });

  it('repeats no ID from busy or idle processes, and is reported at once', async () => {
    // The idle process takes a few blocks now, then nothing until after the promotion.
    const { ledger, busy, idle } = await startFleet(servers, SEQUENCE, BLOCK_SIZE);
    const before = startLoad(ledger, busy, SEQUENCE, 4);
    // Long enough for the replica to apply A's first seconds, and to lag REPLICA_DELAY_S behind.
    await sleep(3000 + REPLICA_DELAY_S * 1000);
    await before.stop();
    const servedBefore = ledger.highestTicket(BLOCK_SIZE, 1n);
    const replicaLast = await env.promote(SEQUENCE);
    const promotedAt = Date.now();
    // The idle process comes back first (its cache is nearly empty, the busy ones' are not), and
    // the busy ones go on beside it.
    const after = startLoad(ledger, busy, SEQUENCE, 4);
    const idleDone = (async () => {
      for (let i = 0; i < 40; i++) await ledger.request(idle.url, idle.name, SEQUENCE, 40);
    })();
    let reportedAfterMs: number | undefined;
    while (Date.now() < promotedAt + 5000 && reportedAfterMs === undefined) {
      if (
        (await regressionReports(
          servers.map((s) => s.url),
          env.aName,
        )) > 0
      )
        reportedAfterMs = Date.now() - promotedAt;
      else await sleep(20);
    }
    await idleDone;
    await sleep(1000);
    await after.stop();

    console.log(
      `promoted replica: A's counter went back from ticket ${servedBefore} to ${replicaLast}; ${ledger.acknowledged} IDs acknowledged, ` +
        `${ledger.repeats.length} repeated, statuses ${JSON.stringify(Object.fromEntries(ledger.statuses))}, reported after ${reportedAfterMs} ms`,
    );
    // The test tests something: the promotion took A's counter back below tickets already served.
    expect(replicaLast).toBeGreaterThan(0n);
    expect(replicaLast).toBeLessThan(servedBefore);
    expect(ledger.repeats).toEqual([]);
    expect(ledger.unique).toBe(ledger.acknowledged);
    expect(ledger.statuses.get(200) ?? 0).toBeGreaterThan(100);
    expect(reportedAfterMs).toBeDefined();
    expect(reportedAfterMs!).toBeLessThan(2000);
    // A structured error line names the backend and the sequence (whatever its wording).
    const lines = logs
      .flatMap((l) => l.lines)
      .filter((l) => l.level === 50 && l.backend === env.aLabel && l.sequence === SEQUENCE);
    expect(lines.length).toBeGreaterThan(0);
  });
});
