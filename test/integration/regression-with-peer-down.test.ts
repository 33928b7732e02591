/**
 * A's counter goes back while B, the only peer that can hold claims, is down: the documented
 * fallback. With TICKETD_CLAIMS=required nothing unclaimed is served (503s until B is back, then
 * the claims catch the regression). With the default (preferred), a process serves on its own
 * marks: it refuses A's repeats itself, and counts and logs the unclaimed tickets once per episode.
 */
import type { RunningTicketd } from '../../src/server.js';
import type { LocalPair } from '../../src/launcher/local-pair.js';
import { IdLedger, sleep, startFleet, startLoad } from '../support/id-ledger.js';
import { restoreBackup, startReplicatedBackends, takeBackup, type ReplicatedBackends } from '../support/regressions.js';
import {
  capturingLogger,
  metricSum,
  putSequence,
  regressionReports,
  startInProcess,
  startPrivatePair,
} from '../support/ticketd.js';

const BLOCK_SIZE = 10n;

describe('a regression while the peer is down', () => {
  it('TICKETD_CLAIMS=required: a promoted replica serves nothing until B is back, and no ID repeats', async () => {
    const sequence = 'required_down';
    const env: ReplicatedBackends = await startReplicatedBackends(2);
    const servers: RunningTicketd[] = [];
    try {
      for (let i = 0; i < 3; i++) servers.push(await startInProcess(env.backendsUrl, { claims: 'required' }));
      const { ledger, busy, idle } = await startFleet(servers, sequence, BLOCK_SIZE);
      const before = startLoad(ledger, busy, sequence, 4);
      await sleep(4000);
      await before.stop();
      const servedBefore = ledger.highestTicket(BLOCK_SIZE, 1n);
      env.b.signal('SIGKILL');
      await env.b.exited();
      const replicaLast = await env.promote(sequence);

      const okBefore = ledger.statuses.get(200) ?? 0;
      const during = startLoad(ledger, [...busy, idle], sequence, 4);
      await sleep(2000);
      await during.stop();
      const outage = { ok: (ledger.statuses.get(200) ?? 0) - okBefore, unavailable: ledger.statuses.get(503) ?? 0 };
      await env.b.restart();
      const after = startLoad(ledger, [...busy, idle], sequence, 4);
      await sleep(4000);
      await after.stop();

      const reported = await regressionReports(
        servers.map((s) => s.url),
        env.aName,
      );
      const unclaimed = await Promise.all(servers.map((s) => metricSum(s.url, 'ticketd_unclaimed_tickets_total')));
      console.log(
        `required, peer down: A went back from ticket ${servedBefore} to ${replicaLast}; during the outage ${outage.ok} answered from cache, ${outage.unavailable} 503; ` +
          `in all ${JSON.stringify(Object.fromEntries(ledger.statuses))}; ${ledger.repeats.length} repeated; ${reported} reports, unclaimed tickets ${unclaimed.join('/')}`,
      );
      expect(replicaLast).toBeLessThan(servedBefore);
      // Only cached IDs went out while B was down, then 503s.
      expect(outage.unavailable).toBeGreaterThan(0);
      expect(ledger.repeats).toEqual([]);
      expect(ledger.statuses.get(200) ?? 0).toBeGreaterThan(okBefore + outage.ok + 100);
      expect(reported).toBeGreaterThan(0);
    } finally {
      await Promise.all(servers.map((s) => s.close()));
      await env.dispose();
    }
  });

  it('TICKETD_CLAIMS=preferred: one process serves on its own marks, refuses the repeats, and counts what went unclaimed', async () => {
    const sequence = 'preferred_down';
    const pair: LocalPair & { dispose(): Promise<void> } = await startPrivatePair();
    const log = capturingLogger();
    const server = await startInProcess(pair.backendsUrl, {}, log.logger);
    try {
      const aLabel = server.service.backendStatus()[0]!.backend;
      expect(await putSequence(server.url, sequence, { blockSize: Number(BLOCK_SIZE) })).toBe(201);
      const ledger = new IdLedger();
      const one = [{ url: server.url, name: 'only' }];
      const before = startLoad(ledger, one, sequence, 3);
      await sleep(1000);
      const backup = await takeBackup(pair.a.url);
      await sleep(2000);
      await before.stop();
      pair.b.signal('SIGKILL');
      await pair.b.exited();
      await restoreBackup(pair.a.url, backup);
      const during = startLoad(ledger, one, sequence, 3);
      await sleep(3000);
      await during.stop();
      const aName = server.service.backendStatus()[0]!.name;
      const unclaimed = await metricSum(server.url, 'ticketd_unclaimed_tickets_total', { backend: aName });
      const advanced = await metricSum(server.url, 'ticketd_regressions_total', {
        backend: aName,
        action: 'advanced',
      });
      const duringOutage = (
        (await (await fetch(`${server.url}/v1/sequences/${sequence}`)).json()) as { backends: { unclaimed: boolean }[] }
      ).backends[0]!.unclaimed;
      await pair.b.restart();
      const after = startLoad(ledger, one, sequence, 3);
      await sleep(3000);
      await after.stop();

      const episodes = log.lines.filter(
        (l) => l.backend === aLabel && l.sequence === sequence && l.unclaimedEpisode !== undefined,
      );
      console.log(
        `preferred, peer down: ${ledger.acknowledged} IDs, ${ledger.repeats.length} repeated, ${unclaimed} unclaimed tickets, ${advanced} advances, episodes ${episodes.map((e) => e.unclaimedEpisode).join(',')}`,
      );
      expect(ledger.repeats).toEqual([]);
      expect(unclaimed).toBeGreaterThan(0);
      expect(duringOutage).toBe(true);
      expect(server.service.backendsFor(sequence)[0]!.unclaimed).toBe(false);
      expect(advanced).toBeGreaterThan(0);
      // Logged once when the episode began (served: true), once when claims were taken again.
      expect(episodes.map((e) => [e.unclaimedEpisode, e.served ?? null])).toEqual([
        ['start', true],
        ['end', null],
      ]);
    } finally {
      await server.close();
      await pair.dispose();
    }
  });
});
