/**
 * Strict sequences under faults (docs/strict-sequences.md): three `ticketd serve` processes on three
 * backends of this test's own, a load over all of them recorded for the linearizability checker,
 * while the leader is killed (-9), stopped past its lease (SIGSTOP, then SIGCONT), and a backend is
 * killed and restarted. Then the same with a planted bug (the lease not heeded), which the checker
 * must catch.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STRICT_LEASE_MS } from '../../src/core/strict.js';
import type { LocalServer } from '../../src/launcher/local-mysql.js';
import { PLANTED_BUG_VARIABLE } from '../../src/server.js';
import { checkLinearizable, describeVerdict, type Verdict } from '../support/linearizability.js';
import { longestGap, strictLoad, type StrictLoad } from '../support/strict-load.js';
import { putSequence, runCliAsync, spawnTicketd, startThreeBackends, type ChildTicketd } from '../support/ticketd.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('strict sequences under faults', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-strict-'));
  const servers: LocalServer[] = [];
  let backends = '';
  const children: ChildTicketd[] = [];

  beforeAll(async () => {
    const started = await startThreeBackends(dir);
    servers.push(...started.servers);
    backends = started.backends;
  }, 120_000);

  afterAll(async () => {
    await Promise.all(children.map((c) => c.stop('SIGKILL')));
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  /** Three front ends and a new strict sequence; the load runs over them all. */
  const fleet = async (
    label: string,
    env: Record<string, string> = {},
  ): Promise<{ name: string; fronts: Map<string, ChildTicketd>; load: StrictLoad }> => {
    const fronts = new Map<string, ChildTicketd>();
    for (let i = 1; i <= 3; i++) {
      const child = await spawnTicketd(backends, env);
      children.push(child);
      fronts.set(`fe${i}`, child);
    }
    const name = `strict_${label.replace(/[^a-z]+/g, '_').slice(0, 20)}_${process.pid}`;
    expect(await putSequence(fronts.get('fe1')!.url, name, { blockSize: 1, ids: 'strict' })).toBe(201);
    const load = strictLoad(name, () => new Map([...fronts].map(([k, c]) => [k, c.url])), { concurrency: 9 });
    await sleep(1500);
    return { name, fronts, load };
  };

  const leaderOf = async (name: string, fronts: Map<string, ChildTicketd>): Promise<[string, ChildTicketd]> => {
    for (const [via, child] of fronts) {
      const shown = (await (await fetch(`${child.url}/v1/sequences/${name}`)).json()) as {
        leader: { self: boolean } | null;
      };
      if (shown.leader?.self === true) return [via, child];
    }
    throw new Error(`no front end leads ${name}`);
  };

  const verdictOf = (label: string, load: StrictLoad, extra: string): Verdict => {
    const verdict = checkLinearizable(load.history);
    console.log(`strict, ${label}: ${describeVerdict(verdict)}; statuses ${JSON.stringify(load.statuses)}; ${extra}`);
    return verdict;
  };

  const expectLinearizable = (verdict: Verdict): void => {
    expect(verdict.outOfOrder).toBe(0);
    expect(verdict.repeated).toEqual([]);
    expect(verdict.unsorted).toBe(0);
    expect(verdict.operations).toBeGreaterThan(200);
  };

  it('kill -9 of the leader: the others elect a new one within 3 s, and the order holds', async () => {
    const { name, fronts, load } = await fleet('kill');
    const [via, leader] = await leaderOf(name, fronts);
    const killedAt = performance.now();
    await leader.stop('SIGKILL');
    fronts.delete(via);
    await sleep(5000);
    const stall = longestGap(load.history, killedAt, performance.now());
    await load.stop();
    const [newVia] = await leaderOf(name, fronts);
    const verdict = verdictOf(
      'leader killed',
      load,
      `${via} killed; ${newVia} leads now; longest time without an answer after the kill ${stall.toFixed(0)} ms`,
    );
    expectLinearizable(verdict);
    expect(stall).toBeLessThan(3000);
  }, 60_000);

  // Requests sent to the stopped leader wait in its socket's queue; when it wakes they are the ones
  // a process that heeds no lease would serve from its old bound, below what the new leader served.
  const stopPastLease = async (label: string, env: Record<string, string>): Promise<Verdict> => {
    const { name, fronts, load } = await fleet(label, env);
    const [via, leader] = await leaderOf(name, fronts);
    leader.process.kill('SIGSTOP');
    const probes: Promise<void>[] = [];
    const stoppedAt = performance.now();
    while (performance.now() - stoppedAt < 2 * STRICT_LEASE_MS) {
      probes.push(load.send(via, leader.url, 2));
      await sleep(100);
    }
    leader.process.kill('SIGCONT');
    await Promise.all(probes);
    await sleep(1000);
    await load.stop();
    const [newVia] = await leaderOf(name, fronts).catch(() => ['none']);
    return verdictOf(
      label,
      load,
      `${via} stopped for ${2 * STRICT_LEASE_MS} ms (lease ${STRICT_LEASE_MS} ms), ${probes.length} requests sent to it meanwhile; ${newVia} leads after`,
    );
  };

  it('SIGSTOP of the leader past its lease, then SIGCONT: it serves nothing stale when it wakes', async () => {
    expectLinearizable(await stopPastLease('leader stopped', {}));
  }, 60_000);

  it('the planted bug (a leader that serves on past its lease) is caught by the checker', async () => {
    const verdict = await stopPastLease('planted bug: lease not heeded', { [PLANTED_BUG_VARIABLE]: 'skip-fence' });
    expect(verdict.outOfOrder).toBeGreaterThan(0);
  }, 60_000);

  it('kill -9 of a backend, then its restart: a majority still serves, and the order holds', async () => {
    const { fronts, load } = await fleet('backend');
    const c = servers[2]!;
    c.signal('SIGKILL');
    await c.exited();
    const killedAt = performance.now();
    await sleep(3000);
    const during = load.history.filter((o) => o.answeredAt > killedAt).length;
    await c.restart();
    await sleep(2000);
    await load.stop();
    const verdict = verdictOf(
      'backend killed',
      load,
      `${during} answers while backend c was down; ${fronts.size} front ends`,
    );
    expectLinearizable(verdict);
    expect(during).toBeGreaterThan(100);
  }, 60_000);

  it('fence names every strict sequence, and --apply refuses (changing nothing) until each is retired', async () => {
    const plan = await runCliAsync(['fence'], { TICKETD_BACKENDS: backends });
    expect(plan.status).toBe(0);
    expect(plan.stdout).toMatch(new RegExp(`strict sequence strict_backend_${process.pid}: its bound is not fenced`));
    expect(plan.stdout).not.toMatch(/strict sequence default:/);
    const strict = [...plan.stdout.matchAll(/^strict sequence (\S+): its bound is not fenced/gm)].map((m) => m[1]!);
    const before = await counterOf('default');
    const refused = await runCliAsync(['fence', '--apply'], { TICKETD_BACKENDS: backends });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(
      /fence does not raise strict bounds, and .*strict_backend_\d+.* would start on restored ones.*retire each first \(npx ticketd sequences retire <name>\).*\(TICKETD_FENCE_REFUSED\)/,
    );
    expect(await counterOf('default')).toBe(before);
    for (const name of strict)
      expect((await runCliAsync(['sequences', 'retire', name], { TICKETD_BACKENDS: backends })).status).toBe(0);
    const applied = await runCliAsync(['fence', '--apply'], { TICKETD_BACKENDS: backends });
    expect(applied.status).toBe(0);
    expect(await counterOf('default')).toBeGreaterThan(before);
  }, 60_000);

  /** The next ticket of a sequence's counter on backend a. */
  async function counterOf(sequence: string): Promise<bigint> {
    const mysql = await import('mysql2/promise');
    const conn = await mysql.createConnection(servers[0]!.url);
    try {
      const [rows] = await conn.query<import('mysql2').RowDataPacket[]>(
        "SELECT AUTO_INCREMENT AS next FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'ticketd' AND TABLE_NAME = ?",
        [`tickets_${sequence}`],
      );
      return BigInt(String(rows[0]!.next));
    } finally {
      await conn.end();
    }
  }
});
