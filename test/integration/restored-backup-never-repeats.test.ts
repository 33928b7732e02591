/**
 * Backend A restored from a logical backup taken seconds before (every table: tickets, claims,
 * sequences, identity), while three ticketd processes run: two busy, one idle since the start.
 */
import type { LocalPair } from '../../src/launcher/local-pair.js';
import type { RunningTicketd } from '../../src/server.js';
import { sleep, startFleet, startLoad } from '../support/id-ledger.js';
import { restoreBackup, takeBackup } from '../support/regressions.js';
import { capturingLogger, regressionReports, startInProcess, startPrivatePair } from '../support/ticketd.js';

const SEQUENCE = 'restored';
const BLOCK_SIZE = 10n;

describe('backend A restored from a backup taken seconds before', () => {
  let pair: LocalPair & { dispose(): Promise<void> };
  const servers: RunningTicketd[] = [];
  const logs = [capturingLogger(), capturingLogger(), capturingLogger()];

  beforeAll(async () => {
    pair = await startPrivatePair();
    for (const { logger } of logs) servers.push(await startInProcess(pair.backendsUrl, {}, logger));
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await pair?.dispose();
  });

  it('repeats no ID from busy or idle processes, and is reported', async () => {
    const aLabel = servers[0]!.service.backendStatus()[0]!.backend;
    const { ledger, busy, idle } = await startFleet(servers, SEQUENCE, BLOCK_SIZE);
    const before = startLoad(ledger, busy, SEQUENCE, 4);
    await sleep(1000);
    const backup = await takeBackup(pair.a.url);
    await sleep(2000);
    await before.stop();
    const servedBefore = ledger.highestTicket(BLOCK_SIZE, 1n);
    await restoreBackup(pair.a.url, backup);
    const after = startLoad(ledger, busy, SEQUENCE, 4);
    for (let i = 0; i < 40; i++) await ledger.request(idle.url, idle.name, SEQUENCE, 40);
    await sleep(1000);
    await after.stop();

    const backupTickets = backup.find((t) => t.table === `tickets_${SEQUENCE}`)!.rows.map((r) => BigInt(String(r.id)));
    const restoredTo = backupTickets.reduce((m, t) => (t > m ? t : m), 0n);
    const reported = await regressionReports(
      servers.map((s) => s.url),
      servers[0]!.service.backendStatus()[0]!.name,
    );
    console.log(
      `restored backup: A's counter went back from ticket ${servedBefore} to ${restoredTo}; ${ledger.acknowledged} IDs acknowledged, ${ledger.repeats.length} repeated, ${reported} reports`,
    );
    expect(restoredTo).toBeGreaterThan(0n);
    expect(restoredTo).toBeLessThan(servedBefore);
    expect(ledger.repeats).toEqual([]);
    expect(ledger.statuses.get(200) ?? 0).toBeGreaterThan(100);
    expect(reported).toBeGreaterThan(0);
    const lines = logs
      .flatMap((l) => l.lines)
      .filter((l) => l.level === 50 && l.backend === aLabel && l.sequence === SEQUENCE);
    expect(lines.length).toBeGreaterThan(0);
    // Reported once per episode, not once per refused ticket (a flood of ~1,000 lines per front end was seen).
    const warnings = logs.map((l) => l.lines.filter((line) => Number(line.level) >= 40));
    console.log(
      `restored backup: warning and error lines per front end ${warnings.map((w) => w.length).join(', ')}: ${JSON.stringify([...new Set(warnings.flat().map((w) => w.msg))])}`,
    );
    for (const w of warnings) expect(w.length).toBeLessThanOrEqual(12);
  });
});
