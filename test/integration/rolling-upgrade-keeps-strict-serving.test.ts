/**
 * A rolling upgrade from the previous minor release (issue 49, item 4): two ticketd 0.11.0 front
 * ends (built from this repository's history, commit 3f3d39c) serve a strict sequence, and each is
 * replaced with this version on its address, one at a time (SIGTERM, start, wait for /readyz),
 * while Node SDK callers holding both URLs keep asking for its IDs. Through the mixed fleet a
 * follower of one version forwards to a leader of the other; no strict request may fail, and no ID
 * may repeat or go back in a caller's order.
 */
import { createTicketClient } from 'ticketd-client';
import { buildRelease } from '../support/old-release.js';
import { metricSum, putSequence, sharedBackends, spawnTicketd, type ChildTicketd } from '../support/ticketd.js';
import { freePort } from '../../src/launcher/local-mysql.js';
import { sleep } from '../support/id-ledger.js';
import { waitReady } from '../support/ticketd.js';

const OLD = buildRelease('0.11.0');
if ('unavailable' in OLD) console.log(`rolling upgrade from 0.11.0: not run: ${OLD.unavailable}`);
const run = 'main' in OLD || process.env.CI !== undefined ? describe : describe.skip;

run('a rolling upgrade from 0.11.0 with strict sequences serving', () => {
  const fronts: ChildTicketd[] = [];
  const stopped: ChildTicketd[] = [];

  afterAll(async () => {
    await Promise.all([...fronts, ...stopped].map((f) => f.stop('SIGKILL')));
  });

  it('replaces each 0.11.0 front end with this version, one at a time: no strict request fails, no ID repeats', async () => {
    if (!('main' in OLD)) throw new Error(OLD.unavailable);
    const ports = [await freePort(), await freePort()];
    for (const port of ports) fronts.push(await spawnTicketd(sharedBackends(), {}, OLD.main, port));
    const name = `upgrade_strict_${process.pid}`;
    expect(await putSequence(fronts[0]!.url, name, { blockSize: 1000, ids: 'strict' })).toBe(201);
    const urls = fronts.map((f) => f.url);
    const clients = [0, 1].map(() => createTicketClient({ urls, sequence: name, timeoutMs: 8000 }));
    const failures: string[] = [];
    const ids: bigint[] = [];
    let backwards = 0;
    let stopping = false;
    const callers = clients.flatMap((client) =>
      [0, 1].map(async () => {
        let last = 0n;
        while (!stopping) {
          try {
            const id = await client.next();
            if (id <= last) backwards++;
            last = id;
            ids.push(id);
          } catch (error) {
            failures.push(`at ${Date.now()}: ${String(error)}`);
            await sleep(50);
          }
          await sleep(5);
        }
      }),
    );
    await sleep(2000);
    const steps: string[] = [];
    const mixed: number[] = [];
    let forwardedInMixedFleet = 0;
    for (const [k, port] of ports.entries()) {
      const old = fronts[k]!;
      const before = ids.length;
      const code = await old.stop('SIGTERM');
      stopped.push(old);
      fronts[k] = await spawnTicketd(sharedBackends(), {}, undefined, port);
      await waitReady(fronts[k].url);
      await sleep(3000);
      expect(code).toBe(0);
      if (k === 0) {
        // The fleet is mixed now (this version and 0.11.0): ask each front end directly, so that the
        // one that does not lead forwards to the one that does, across the versions.
        for (const f of fronts)
          for (let i = 0; i < 10; i++)
            mixed.push((await fetch(`${f.url}/v1/sequences/${name}/ids?count=1`, { method: 'POST' })).status);
      }
      // The fleet is mixed after the first replacement: the new one forwards to, or leads for, the old one.
      const forwarded = await Promise.all(
        fronts.map((f) =>
          metricSum(f.url, 'ticketd_strict_forwarded_requests_total', { sequence: name }).catch(() => -1),
        ),
      );
      if (k === 0) forwardedInMixedFleet = forwarded.reduce((a, b) => a + Math.max(0, b), 0);
      steps.push(`${old.url} replaced (${ids.length - before} IDs meanwhile; forwarded so far ${forwarded.join('/')})`);
    }
    stopping = true;
    await Promise.all(callers);
    await Promise.all(clients.map((c) => c.close()));
    const repeats = ids.length - new Set(ids).size;
    console.log(
      `rolling upgrade 0.11.0 → this version: ${steps.join('; ')}; mixed fleet, asked directly: ${mixed.filter((s) => s === 200).length} of ${mixed.length} answered 200; ${ids.length} strict IDs, ${failures.length} failed calls, ${repeats} repeated, ${backwards} out of a caller's order${failures.length > 0 ? `\n${failures.slice(0, 10).join('\n')}` : ''}`,
    );
    expect(mixed.filter((s) => s !== 200)).toEqual([]);
    expect(forwardedInMixedFleet).toBeGreaterThan(0);
    expect(failures).toEqual([]);
    expect(repeats).toBe(0);
    expect(backwards).toBe(0);
    expect(ids.length).toBeGreaterThan(200);
  }, 300_000);
});
