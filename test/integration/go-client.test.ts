/**
 * The Go client (clients/go) against a real ticketd: two MariaDB backends from the launcher,
 * `ticketd serve` processes in front, and the scenarios of clients/conformance.md run by the
 * module's own programs (cmd/ticketd-conformance, cmd/snowflake-holder), built once with Debian's
 * go. First go vet, gofmt -l and go test (the shared vectors). The Go side only uses the client
 * and reports what it handed out; this file causes the faults and judges: repeats are counted
 * here, never by the client. Each scenario prints `SCENARIO <id> ok` with its figures.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  putSequence,
  spawnTicketd,
  startPrivatePair,
  TEST_ADMIN_TOKEN,
  type ChildTicketd,
} from '../support/ticketd.js';
import {
  overlappingLeases,
  readLeaseFiles,
  repeatedIds,
  spawnHolder,
  timestampOf,
  type Holder,
} from '../support/snowflake-fleet.js';
import { putPool } from '../support/worker-pools.js';
import {
  buildGoPrograms,
  findGo,
  GO_CLIENT_DIR,
  goMissing,
  runGo,
  type GoPrograms,
  type GoRun,
} from '../support/go-client.js';
import { sleep } from '../support/id-ledger.js';
import {
  judgeCloseReturns,
  expectClosedAndReused,
  serveAndDecode,
  type CloseReturnsRun,
} from '../support/close-returns.js';

const go = findGo();
goMissing(go, 'the Go client conformance scenarios');
const OPAQUE = 'go_opaque';
const OPAQUE_TOKEN = 'go-opaque-token-0123456789';
const RETURNS = 'go_returns';
/** The scenario ids of clients/conformance.md, the list every client runs. */
const SCENARIOS = [...readFileSync('clients/conformance.md', 'utf8').matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map(
  (m) => m[1]!,
);

/** The summary line a conformance command printed last, or a failure naming what it printed. */
function summary(run: GoRun, scenario: string): Record<string, unknown> {
  const found = run.lines.find((l) => l['scenario'] === scenario);
  if (run.status !== 0 || found === undefined)
    throw new Error(`go ${scenario} exited ${run.status}: ${run.stderr.slice(-3000)} ${run.stdout.slice(-1000)}`);
  return found;
}

function readIds(file: string): bigint[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map(BigInt);
}

function repeatsIn(ids: readonly bigint[]): number {
  return ids.length - new Set(ids).size;
}

(go.ok ? describe : describe.skip)('the Go client against a real ticketd (clients/conformance.md)', () => {
  const goCommand = go.ok ? go.command : 'go';
  let pair: Awaited<ReturnType<typeof startPrivatePair>>;
  let fronts: ChildTicketd[] = [];
  let programs: GoPrograms;
  const extra: ChildTicketd[] = [];
  const holders: Holder[] = [];
  const passed = new Set<string>();
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-go-'));
  // The holders' lease files, apart from the ID lists of the other scenarios.
  const leases = join(dir, 'leases');
  const env = { TICKETD_CLIENT_TOKENS: `${OPAQUE}:${OPAQUE_TOKEN},${RETURNS}:${OPAQUE_TOKEN}` };
  const urls = (): string => fronts.map((f) => f.url).join(',');

  beforeAll(async () => {
    mkdirSync(leases);
    const built = buildGoPrograms(goCommand, join(dir, 'bin'));
    pair = await startPrivatePair();
    fronts = await Promise.all([spawnTicketd(pair.backendsUrl, env), spawnTicketd(pair.backendsUrl, env)]);
    programs = await built;
  }, 180_000);

  afterAll(async () => {
    await Promise.all(holders.map((h) => h.stop()));
    await Promise.all([...fronts, ...extra].map((f) => f.stop('SIGKILL')));
    await pair.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  function holder(name: string, pool: string, env: readonly string[] = []): Holder {
    const h = spawnHolder(
      leases,
      name,
      pool,
      fronts.map((f) => f.url),
      { command: ['env', ...env, programs.holder] },
    );
    holders.push(h);
    return h;
  }

  it('vectors: go vet and gofmt are clean, and go test passes (every shared vector identical)', async () => {
    const vet = await runGo(goCommand, ['vet', './...']);
    expect(`${vet.stderr}${vet.stdout}`).toBe('');
    expect(vet.status).toBe(0);
    const fmt = await runGo('gofmt', ['-l', '.']);
    expect(fmt.status).toBe(0);
    expect(fmt.stdout).toBe('');
    const test = await runGo(goCommand, ['test', '-count=1', '-v', './...'], { timeoutMs: 300_000 });
    const ran = [...test.stdout.matchAll(/^--- PASS: (\w+)/gm)].map((m) => m[1]);
    if (test.status !== 0) throw new Error(`go test exited ${test.status}:\n${test.stdout.slice(-4000)}${test.stderr}`);
    expect(ran).toEqual(
      expect.arrayContaining([
        'TestPermutationVectors',
        'TestSnowflakeVectors',
        'TestAES256BlocksMatchOpenSSL',
        'TestEveryErrorHasTheTypeScriptCode',
      ]),
    );
    console.log(
      `SCENARIO vectors ok: go vet and gofmt -l clean; go test passed ${ran.length} tests (${ran.join(', ')})`,
    );
    passed.add('vectors');
  }, 300_000);

  it('blocks-two-processes: two Go processes of four goroutines each hand out IDs from leased blocks, 0 repeats', async () => {
    const sequence = 'go_blocks';
    expect(await putSequence(fronts[0]!.url, sequence, { blockSize: 100 })).toBe(201);
    const files = [join(dir, 'p1.ids'), join(dir, 'p2.ids')];
    const runs = await Promise.all(
      files.map((file) => runGo(programs.conformance, ['hand-out', urls(), sequence, '4', '3', file])),
    );
    const sums = runs.map((r) => summary(r, 'hand-out'));
    const perProcess = files.map(readIds);
    const all = perProcess.flat();
    for (const [k, ids] of perProcess.entries()) {
      expect(ids.length).toBe(sums[k]!['ids']);
      // More than one block each: how many is the bench's business (a loaded machine gave 204 in 3 s).
      expect(ids.length).toBeGreaterThan(100);
    }
    const leased = sums.reduce((n, s) => n + (s['leases'] as number), 0);
    // Every ID is ticketd's: a sample decoded by the admin route came from a ticket it issued.
    for (const id of all.filter((_, i) => i % Math.floor(all.length / 10) === 0)) {
      const res = await fetch(`${fronts[1]!.url}/v1/sequences/${sequence}/ids/${id}`, {
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      });
      expect(res.status).toBe(200);
    }
    console.log(
      `SCENARIO blocks-two-processes ok: ${all.length} IDs from 2 processes × 4 goroutines, ${repeatsIn(all)} repeated, ${leased} blocks of 100 leased, ${sums.map((s) => s['failed']).join('+')} failed calls`,
    );
    expect(repeatsIn(all)).toBe(0);
    expect(sums.map((s) => s['failed'])).toEqual([0, 0]);
    expect(leased * 100).toBeGreaterThanOrEqual(all.length);
    // Leased ahead, but not without bound: at most 32 blocks ahead per process (and the one in hand).
    expect(leased).toBeLessThanOrEqual(Math.ceil(all.length / 100) + 2 * 33);
    passed.add('blocks-two-processes');
  }, 60_000);

  it('opaque-decodes-back: opaque IDs handed out by the client decode back through the admin route, and the key needs the token', async () => {
    expect(await putSequence(fronts[0]!.url, OPAQUE, { blockSize: 1000, ids: 'opaque' })).toBe(201);
    const result = summary(
      await runGo(programs.conformance, ['opaque', urls(), OPAQUE, OPAQUE_TOKEN, '2500']),
      'opaque-decodes-back',
    );
    const pairs = result['pairs'] as [string, string, boolean][];
    expect(result['ids']).toBe('opaque');
    expect(pairs.length).toBe(2500);
    expect(new Set(pairs.map(([id]) => id)).size).toBe(2500);
    expect(pairs.every(([, , roundTrip]) => roundTrip)).toBe(true);
    // Not ordered: an opaque sequence's IDs from consecutive ordered ones are scattered.
    const ordered = pairs.map(([, o]) => BigInt(o));
    const opaque = pairs.map(([id]) => BigInt(id));
    expect(opaque.filter((id, i) => i > 0 && id < opaque[i - 1]!).length).toBeGreaterThan(500);
    let checked = 0;
    for (let i = 0; i < pairs.length; i += 125) {
      const res = await fetch(`${fronts[i % 2]!.url}/v1/sequences/${OPAQUE}/ids/${opaque[i]}`, {
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      });
      const body = (await res.json()) as { ordered?: string };
      expect(res.status).toBe(200);
      expect(body.ordered).toBe(String(ordered[i]));
      checked++;
    }
    const refused = result['withoutToken'] as { code: string; codes: string[] } | null;
    console.log(
      `SCENARIO opaque-decodes-back ok: 2500 opaque IDs, 0 repeated, ${checked} decoded by the admin route as the client decoded them; without the token: ${refused?.code} (${refused?.codes.join(', ')})`,
    );
    expect(refused?.code).toBe('TICKETD_CLIENT_LEASE_FAILED');
    expect(refused?.codes).toContain('TICKETD_UNAUTHORIZED');
    passed.add('opaque-decodes-back');
  }, 120_000);

  it('close-returns: a client that took 7 IDs of an opaque block gives the rest back on Close; ticketd serves them again; no ID repeats', async () => {
    expect(await putSequence(fronts[0]!.url, RETURNS, { blockSize: 100, ids: 'opaque' })).toBe(201);
    const run = summary(
      await runGo(programs.conformance, ['close-returns', urls(), RETURNS, OPAQUE_TOKEN, '7', '300']),
      'close-returns',
    ) as unknown as CloseReturnsRun;
    const served = await serveAndDecode(fronts[0]!.url, RETURNS, OPAQUE_TOKEN, 200);
    const judged = judgeCloseReturns(run, 100, served);
    expect(run.taken.length).toBe(7);
    expect(run.returns.length).toBeGreaterThan(0);
    expectClosedAndReused(judged);
    passed.add('close-returns');
  }, 60_000);

  it('strict-coalesced: concurrent calls on a strict sequence are coalesced, every ID from ticketd in real-time order', async () => {
    const sequence = 'go_strict';
    expect(await putSequence(fronts[0]!.url, sequence, { blockSize: 1000, ids: 'strict' })).toBe(201);
    const result = summary(
      await runGo(programs.conformance, ['strict', urls(), sequence, '8', '40']),
      'strict-coalesced',
    );
    const calls = (result['calls'] as [string, number, number][]).map(([id, began, ended]) => ({
      id: BigInt(id),
      began,
      ended,
    }));
    expect(result['failed']).toEqual([]);
    expect(result['strict']).toBe(true);
    expect(result['nowait']).toBe('TICKETD_CLIENT_STRICT');
    expect(calls.length).toBe(320);
    expect(new Set(calls.map((c) => c.id)).size).toBe(320);
    // Real-time order: a call that began after another ended got a greater ID.
    const byEnd = [...calls].sort((a, b) => a.ended - b.ended);
    let violations = 0;
    for (const later of calls)
      for (const earlier of byEnd) {
        if (earlier.ended >= later.began) break;
        if (earlier.id >= later.id) violations++;
      }
    const batch = (result['batch'] as string[]).map(BigInt);
    const requests = result['requests'] as number;
    console.log(
      `SCENARIO strict-coalesced ok: 320 calls from 8 goroutines, ${requests} requests to ticketd, ${violations} out of real-time order`,
    );
    expect(violations).toBe(0);
    expect(requests).toBeLessThan(320);
    expect(batch.every((id, i) => i === 0 || id > batch[i - 1]!)).toBe(true);
    expect(batch[0]! > calls.reduce((m, c) => (c.id > m ? c.id : m), 0n)).toBe(true);
    passed.add('strict-coalesced');
  }, 60_000);

  it('retired-refused: once a sequence is retired, the next lease fails with TICKETD_SEQUENCE_RETIRED at once', async () => {
    const sequence = 'go_retired';
    expect(await putSequence(fronts[0]!.url, sequence, { blockSize: 10 })).toBe(201);
    let retired = 0;
    const run = await runGo(programs.conformance, ['retired', urls(), sequence, '10'], {
      onLine: (line, stdin) => {
        if (line['event'] !== 'first') return;
        void fetch(`${fronts[0]!.url}/v1/sequences/${sequence}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
        }).then((res) => {
          retired = res.status;
          stdin.write('retired\n');
        });
      },
    });
    const result = summary(run, 'retired-refused');
    const refused = result['refused'] as { code: string; codes: string[] } | null;
    const after = result['after'] as string[];
    console.log(
      `SCENARIO retired-refused ok: DELETE answered ${retired}; ${after.length} buffered IDs handed out after it, then ${refused?.code} (${refused?.codes.join(', ')})`,
    );
    expect(retired).toBe(200);
    expect(refused?.code).toBe('TICKETD_CLIENT_LEASE_FAILED');
    expect(refused?.codes).toContain('TICKETD_SEQUENCE_RETIRED');
    // Only what was leased before the retirement: the block in hand and one leased ahead.
    expect(after.length).toBeLessThanOrEqual(2 * 10);
    passed.add('retired-refused');
  }, 60_000);

  it('snowflake-sigstop: a Go holder paused past its TTL mints nothing more on its old lease after SIGCONT; its Next waits and returns IDs of a new lease', async () => {
    const pool = 'go_paused';
    expect((await putPool(fronts[0]!.url, pool, { workerBits: 1, ttlMs: 1500, maxSkewMs: 200 })).status).toBe(201);
    // The paused one mints with Next, which waits for a lease (docs: client-semantics, "What waits").
    const first = holder('first', pool, ['TICKETD_HOLDER_NEXT=1']);
    const firstLease = await first.waitFor('leased');
    const second = holder('second', pool);
    await second.waitFor('leased');
    first.signal('SIGSTOP');
    const pausedAt = Date.now();
    const third = holder('third', pool);
    const thirdLease = await third.waitFor('leased', 15_000);
    expect(thirdLease['workerId']).toBe(firstLease['workerId']);
    expect(BigInt(thirdLease['epoch'] as string)).toBeGreaterThan(BigInt(firstLease['epoch'] as string));
    await sleep(1000);
    first.signal('SIGCONT');
    const resumedAt = Date.now();
    const ended = await first.waitFor('lease-ended', 5000, resumedAt - 50);
    expect(String(ended['reason'])).toContain('ran out unrenewed');
    // The pool is full (second and third hold both worker IDs): Next waits; once third releases, it takes a new lease.
    await sleep(1500);
    await third.stop();
    const stoppedThird = Date.now();
    const again = await first.waitFor('leased', 10_000, resumedAt);
    await sleep(1000);
    await Promise.all([first.stop(), second.stop()]);
    const files = readLeaseFiles(leases).filter((f) => ['first', 'second', 'third'].includes(f.holder));
    const { total, repeats } = repeatedIds(files);
    const firstIds = files
      .filter((f) => f.holder === 'first' && f.epoch === BigInt(firstLease['epoch'] as string))
      .flatMap((f) => [...f.ids]);
    const newIds = files
      .filter((f) => f.holder === 'first' && f.epoch === BigInt(again['epoch'] as string))
      .flatMap((f) => [...f.ids]);
    const latest = Math.max(...firstIds.map(timestampOf));
    const waitedFor = first.events.filter((e) => e.type === 'take-failed' && e.at >= resumedAt).length;
    console.log(
      `SCENARIO snowflake-sigstop ok: ${total} IDs from three Go holders, ${repeats.length} repeated; the paused holder's last timestamp on its old lease ${latest - pausedAt} ms after the pause, resumed ${resumedAt - pausedAt} ms after it; its Next waited (${waitedFor} take-failed on the full pool) and then minted ${newIds.length} IDs on worker ${String(again['workerId'])} epoch ${String(again['epoch'])}, ${again.at - stoppedThird} ms after the third holder stopped`,
    );
    expect(repeats).toEqual([]);
    expect(overlappingLeases(files)).toEqual([]);
    expect(firstIds.length).toBeGreaterThan(0);
    expect(latest).toBeLessThanOrEqual(pausedAt + 20);
    expect(files.filter((f) => f.holder === 'third').reduce((n, f) => n + f.ids.length, 0)).toBeGreaterThan(0);
    expect(BigInt(again['epoch'] as string)).toBeGreaterThan(BigInt(thirdLease['epoch'] as string));
    expect(newIds.length).toBeGreaterThan(0);
    expect(Math.min(...newIds.map(timestampOf))).toBeGreaterThan(resumedAt - 20);
    // Next never failed with NO_LEASE merely because the pause ended the lease.
    expect(first.events.filter((e) => e.type === 'error')).toEqual([]);
    passed.add('snowflake-sigstop');
  }, 60_000);

  it('snowflake-stepped-clock: a step back is refused with CLOCK_BACK, a step ahead with CLOCK_SKEW, and close releases with the last timestamp', async () => {
    const pool = 'go_steps';
    expect((await putPool(fronts[0]!.url, pool, { workerBits: 4, ttlMs: 3000, maxSkewMs: 1000 })).status).toBe(201);
    // Go reads the time without libc, so libfaketime cannot step it: the holder adds the offset in this file.
    const offsetFile = join(dir, 'clock-offset');
    writeFileSync(offsetFile, '+0\n');
    const stepped = holder('stepped', pool, [`TICKETD_HOLDER_CLOCK_FILE=${offsetFile}`]);
    await stepped.waitFor('leased');
    await sleep(500);
    writeFileSync(offsetFile, '-0.5\n');
    // Events carry the holder's own (stepped) clock: wait for the first of each kind, not one after a time.
    await stepped.waitFor('clock-back', 5000);
    await sleep(1000);
    writeFileSync(offsetFile, '+3\n');
    await stepped.waitFor('skew', 5000);
    await sleep(300);
    writeFileSync(offsetFile, '+0\n');
    await sleep(700);
    await stepped.stop();
    const errors = stepped.events.filter((e) => e.type === 'error').map((e) => e['code']);
    const released = stepped.events.find((e) => e.type === 'released');
    const files = readLeaseFiles(leases).filter((f) => f.holder === 'stepped');
    const { total, repeats } = repeatedIds(files);
    // Written in the order minted: each ID above the one before, so no time went below the last one used.
    let backwards = 0;
    for (const f of files) for (let i = 1; i < f.ids.length; i++) if (f.ids[i]! <= f.ids[i - 1]!) backwards++;
    const last = Math.max(...files.flatMap((f) => [...f.ids].map(timestampOf)));
    console.log(
      `SCENARIO snowflake-stepped-clock ok: ${total} IDs, ${repeats.length} repeated, ${backwards} out of order; refusals ${[...new Set(errors)].join(', ')}; released with lastUsedMs ${String(released?.['lastUsedMs'])} (last ID's time ${last})`,
    );
    expect(total).toBeGreaterThan(0);
    expect(repeats).toEqual([]);
    expect(backwards).toBe(0);
    expect(errors).toContain('TICKETD_CLIENT_CLOCK_BACK');
    expect(errors).toContain('TICKETD_CLIENT_CLOCK_SKEW');
    expect(released?.['lastUsedMs']).toBe(last);
    passed.add('snowflake-stepped-clock');
  }, 60_000);

  it('the README example is example/main.go and runs (its URL pointed at this ticketd, pool web created)', async () => {
    expect((await putPool(fronts[0]!.url, 'web', { workerBits: 10 })).status).toBe(201);
    const readme = readFileSync(join(GO_CLIENT_DIR, 'README.md'), 'utf8');
    const example = readFileSync(join(GO_CLIENT_DIR, 'example', 'main.go'), 'utf8');
    expect(readme).toContain(example.trim());
    const run = await runGo(programs.example, [], { env: { TICKETD_URL: fronts[0]!.url } });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^\d+ \[\d+ \d+ \d+\] \d+ \{\d+ \d+ \d+\}\n$/);
  }, 30_000);

  it('failover-frontend-killed: kill -9 of the first front end while a Go process hands IDs out: no call fails, 0 repeats', async () => {
    const sequence = 'go_fe_killed';
    const doomed = await spawnTicketd(pair.backendsUrl, env);
    extra.push(doomed);
    expect(await putSequence(doomed.url, sequence, { blockSize: 100 })).toBe(201);
    const file = join(dir, 'fe.ids');
    const running = runGo(programs.conformance, [
      'hand-out',
      [doomed.url, fronts[1]!.url].join(','),
      sequence,
      '2',
      '4',
      file,
    ]);
    await sleep(1500);
    await doomed.stop('SIGKILL');
    expect(doomed.process.signalCode).toBe('SIGKILL');
    const result = summary(await running, 'hand-out');
    const ids = readIds(file);
    console.log(
      `SCENARIO failover-frontend-killed ok: ${ids.length} IDs, ${repeatsIn(ids)} repeated, ${String(result['failed'])} failed calls, ${String(result['leases'])} leases; the first front end killed 1.5 s in`,
    );
    expect(repeatsIn(ids)).toBe(0);
    expect(result['failed']).toBe(0);
    expect(ids.length).toBeGreaterThan(1000);
    passed.add('failover-frontend-killed');
  }, 60_000);

  // Last: it leaves backend A dead.
  it('failover-backend-killed: kill -9 of backend A while a Go process hands IDs out: no call fails, 0 repeats', async () => {
    const sequence = 'go_be_killed';
    expect(await putSequence(fronts[0]!.url, sequence, { blockSize: 100 })).toBe(201);
    const file = join(dir, 'be.ids');
    const running = runGo(programs.conformance, ['hand-out', urls(), sequence, '2', '4', file]);
    await sleep(1500);
    pair.a.signal('SIGKILL');
    await pair.a.exited();
    expect(pair.a.pid).toBeUndefined();
    const result = summary(await running, 'hand-out');
    const ids = readIds(file);
    console.log(
      `SCENARIO failover-backend-killed ok: ${ids.length} IDs, ${repeatsIn(ids)} repeated, ${String(result['failed'])} failed calls, ${String(result['leases'])} leases; backend A killed 1.5 s in`,
    );
    expect(repeatsIn(ids)).toBe(0);
    expect(result['failed']).toBe(0);
    expect(ids.length).toBeGreaterThan(1000);
    passed.add('failover-backend-killed');
  }, 60_000);

  it('passed every scenario of clients/conformance.md', () => {
    expect(SCENARIOS.length).toBeGreaterThanOrEqual(9);
    expect(SCENARIOS.filter((id) => !passed.has(id))).toEqual([]);
  });
});
