// Every backend restored from backups taken seconds before, every front end restarted: nothing in
// the fleet remembers what was served after the backup. Shown once without the fence (IDs repeat),
// then the runbook of docs/operating.md, "Restoring every backend": check warns, fence plans,
// fence --apply moves the counters, the front ends start, and nothing repeats.
import { IdLedger, sleep, startLoad } from '../support/id-ledger.js';
import { restoreBackup, takeBackup, type LogicalBackup } from '../support/regressions.js';
import {
  putSequence,
  runCliAsync,
  spawnTicketd,
  sqlOn,
  startPrivatePair,
  type ChildTicketd,
} from '../support/ticketd.js';

const SEQUENCE = 'everywhere';
const BLOCK_SIZE = 10;

describe('every backend restored from backups', () => {
  let pair: Awaited<ReturnType<typeof startPrivatePair>>;
  let running: ChildTicketd[] = [];

  beforeAll(async () => {
    pair = await startPrivatePair();
  });

  afterAll(async () => {
    await Promise.all(running.map((c) => c.stop()));
    await pair?.dispose();
  });

  const startFrontEnds = async (): Promise<{ url: string; name: string }[]> => {
    running = [await spawnTicketd(pair.backendsUrl), await spawnTicketd(pair.backendsUrl)];
    return running.map((c, i) => ({ url: c.url, name: `front-end-${i + 1}` }));
  };
  const stopFrontEnds = async (): Promise<void> => {
    await Promise.all(running.map((c) => c.stop()));
    running = [];
  };
  const restoreBoth = async (backups: [LogicalBackup, LogicalBackup]): Promise<void> => {
    await restoreBackup(pair.a.url, backups[0]);
    await restoreBackup(pair.b.url, backups[1]);
  };
  const underLoad = async (ledger: IdLedger, servers: { url: string; name: string }[], ms: number): Promise<void> => {
    const load = startLoad(ledger, servers, SEQUENCE, 6);
    await sleep(ms);
    await load.stop();
  };

  it('repeats IDs without the fence, and none when the runbook is followed', async () => {
    const ledger = new IdLedger();
    let servers = await startFrontEnds();
    expect(await putSequence(servers[0]!.url, SEQUENCE, { blockSize: BLOCK_SIZE })).toBe(201);
    await underLoad(ledger, servers, 1500);
    // Both at one consistent moment (front ends stopped, as storage snapshots would be): neither
    // backend's claims then show the other going back. Backups taken moments apart under load are
    // partly caught by the claims alone (one backend's claims hold the other's later tickets).
    await stopFrontEnds();
    const backups: [LogicalBackup, LogicalBackup] = [await takeBackup(pair.a.url), await takeBackup(pair.b.url)];
    servers = await startFrontEnds();
    await underLoad(ledger, servers, 2000);
    await stopFrontEnds();
    const before = ledger.acknowledged;

    // Once without the fence: the restored counters hand the same tickets out again.
    await restoreBoth(backups);
    servers = await startFrontEnds();
    await underLoad(ledger, servers, 1000);
    await stopFrontEnds();
    const unfenced = ledger.repeats.length;
    console.log(`restored everywhere without a fence: ${unfenced} of ${ledger.acknowledged - before} IDs served again`);
    expect(unfenced).toBeGreaterThan(0);

    // The runbook, on the same backups, as if they were two hours old.
    await restoreBoth(backups);
    for (const url of [pair.a.url, pair.b.url])
      await sqlOn(url, 'UPDATE ticketd_claims SET claimed_at = claimed_at - INTERVAL 2 HOUR');
    const env = { TICKETD_BACKENDS: pair.backendsUrl };
    const check = await runCliAsync(['check'], env);
    expect(check.stdout).toMatch(
      /warning: the newest claim on any backend is 2\.0 h old: if every backend was restored from backups, run npx ticketd fence before serving/,
    );
    const plan = await runCliAsync(['fence'], env);
    expect(plan.status).toBe(0);
    expect(plan.stdout).toMatch(
      new RegExp(
        `sequence ${SEQUENCE}: highest ticket \\d+; next ticket ≥ (\\d+) \\(\\+\\d+, newest claim 2\\.0 h ago, [\\d.]+ counter steps/s over the claims kept\\)`,
      ),
    );
    expect(plan.stdout).toContain('nothing changed: run npx ticketd fence --apply to move the counters');
    const applied = await runCliAsync(['fence', '--apply'], env);
    expect(applied.stdout).toMatch(
      /fenced \d+ sequences and 0 worker pools: every backend's counter is at or past the next ticket above/,
    );
    const fencedAt = BigInt(new RegExp(`sequence ${SEQUENCE}: .*next ticket ≥ (\\d+)`).exec(applied.stdout)![1]!);
    // Past every ticket served before, by either backend, before or after the backup.
    expect(fencedAt).toBeGreaterThan(ledger.highestTicket(BigInt(BLOCK_SIZE), 0n));
    expect(fencedAt).toBeGreaterThan(ledger.highestTicket(BigInt(BLOCK_SIZE), 1n));

    servers = await startFrontEnds();
    const acknowledgedBefore = ledger.acknowledged;
    await underLoad(ledger, servers, 2000);
    console.log(
      `after the fence: ${ledger.acknowledged - acknowledgedBefore} IDs, ${ledger.repeats.length - unfenced} repeated`,
    );
    expect(ledger.acknowledged - acknowledgedBefore).toBeGreaterThan(500);
    expect(ledger.repeats.length).toBe(unfenced);
  }, 120_000);
});
