/**
 * A legacy signed INT sequence runs out; the application's column becomes BIGINT and the sequence
 * is widened (PATCH maxId) while two ticketd processes run. Both serve past 2^31 − 1 without a
 * restart, the one that was told at once and the other within the exhausted recheck, with no ID
 * served twice; lowering maxId or changing anything else is refused, and a backend down makes the
 * widening a 503 that a repeat completes.
 */
import type { RunningTicketd } from '../../src/server.js';
import { EXHAUSTED_RECHECK_MS } from '../../src/cache/range-cache.js';
import { IdLedger, sleep } from '../support/id-ledger.js';
import { putSequence, runCli, startInProcess, startPrivatePair, TEST_ADMIN_TOKEN } from '../support/ticketd.js';

const INT_MAX = 2_147_483_647n;
const BIGINT_MAX = 9_223_372_036_854_775_807n;
const SEQUENCE = 'legacy_int';

describe('widening a sequence when its column grows', () => {
  let pair: Awaited<ReturnType<typeof startPrivatePair>>;
  let told: RunningTicketd;
  let other: RunningTicketd;

  beforeAll(async () => {
    pair = await startPrivatePair();
    told = await startInProcess(pair.backendsUrl);
    other = await startInProcess(pair.backendsUrl);
  });

  afterAll(async () => {
    await told?.close();
    await other?.close();
    await pair?.dispose();
  });

  const patch = async (
    base: string,
    body: object,
    token = TEST_ADMIN_TOKEN,
  ): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await fetch(`${base}/v1/sequences/${SEQUENCE}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  /** Takes IDs from a process until it answers something else than 200; returns that status. */
  async function drain(ledger: IdLedger, server: RunningTicketd, who: string, limit = 400): Promise<number> {
    for (let i = 0; i < limit; i++) {
      const status = await ledger.request(server.url, who, SEQUENCE, 1000);
      if (status !== 200) return status;
    }
    return 200;
  }

  it('serves past 2^31 − 1 after the widening, in both processes, with no ID twice', async () => {
    // Near the top of a signed INT: a few hundred thousand IDs are left, then nothing.
    expect(
      await putSequence(told.url, SEQUENCE, { blockSize: 1000, startAfter: '2147000000', maxId: String(INT_MAX) }),
    ).toBe(201);
    const ledger = new IdLedger();
    expect(await drain(ledger, told, 'told')).toBe(409);
    expect(await drain(ledger, other, 'other')).toBe(409);
    const before = [...ledger.ids()].map(BigInt);
    expect(before.every((id) => id <= INT_MAX)).toBe(true);
    expect(ledger.unique).toBeGreaterThan(1000);

    // Refused: lower, another setting, no admin token.
    expect(await patch(told.url, { maxId: String(INT_MAX - 1n) })).toMatchObject({
      status: 409,
      body: { code: 'TICKETD_SEQUENCE_CONFLICT' },
    });
    expect(await patch(told.url, { maxId: String(BIGINT_MAX), blockSize: 10 })).toMatchObject({
      status: 400,
      body: { code: 'TICKETD_BAD_REQUEST' },
    });
    expect((await patch(told.url, { maxId: String(BIGINT_MAX) }, 'wrong-token-0123456789abcdef')).status).toBe(403);

    const widened = await patch(told.url, { maxId: String(BIGINT_MAX) });
    expect(widened).toMatchObject({
      status: 200,
      body: { name: SEQUENCE, maxId: String(BIGINT_MAX), blockSize: '1000' },
    });
    // The same again completes nothing more, and says so with 200.
    expect((await patch(told.url, { maxId: String(BIGINT_MAX) })).status).toBe(200);

    // The process that answered the PATCH serves at once; the other one, whose cache was exhausted,
    // after its recheck, without a restart.
    expect(await ledger.request(told.url, 'told', SEQUENCE, 1000)).toBe(200);
    const started = Date.now();
    let otherStatus = 0;
    while (Date.now() - started < EXHAUSTED_RECHECK_MS + 5000) {
      otherStatus = await ledger.request(other.url, 'other', SEQUENCE, 1000);
      if (otherStatus === 200) break;
      await sleep(250);
    }
    expect(otherStatus).toBe(200);
    for (let i = 0; i < 50; i++)
      for (const s of [told, other]) expect(await ledger.request(s.url, 'after', SEQUENCE, 1000)).toBe(200);
    const after = [...ledger.ids()].map(BigInt).filter((id) => id > INT_MAX);
    console.log(
      `widened: ${ledger.unique} IDs, ${before.length} up to 2^31 − 1 and ${after.length} past it, ${ledger.repeats.length} repeated; the untold process served again ${Date.now() - started} ms after the widening`,
    );
    expect(after.length).toBeGreaterThan(50_000);
    expect(ledger.repeats).toEqual([]);
    // The capacity view follows the new bound.
    const detail = (await (await fetch(`${told.url}/v1/sequences/${SEQUENCE}`)).json()) as {
      maxId: string;
      capacity: { level: string };
    };
    expect(detail).toMatchObject({ maxId: String(BIGINT_MAX), capacity: { level: 'ok' } });
  }, 60_000);

  it("refuses to widen an opaque sequence, since its domain is its key's", async () => {
    expect(await putSequence(told.url, 'widen_opaque', { blockSize: 100, ids: 'opaque', maxId: '100000000' })).toBe(
      201,
    );
    const res = await fetch(`${told.url}/v1/sequences/widen_opaque`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: '{"maxId":"200000000"}',
    });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/opaque.*IDs would repeat/);
  });

  it('shows a widening from the CLI at once in GET of a running process, read from the backends', async () => {
    const name = 'lip';
    expect(await putSequence(told.url, name, { blockSize: 10, maxId: '2000' })).toBe(201);
    // Both processes serve it, so each holds its settings in memory.
    for (const s of [told, other]) expect(await new IdLedger().request(s.url, 'warm', name, 5)).toBe(200);
    const widened = runCli(['sequences', 'set', name, '--max-id', '3000'], { TICKETD_BACKENDS: pair.backendsUrl });
    expect(widened.stderr).toBe('');
    for (const s of [told, other]) {
      const detail = (await (await fetch(`${s.url}/v1/sequences/${name}`)).json()) as Record<string, unknown>;
      expect(detail).toMatchObject({ maxId: '3000', cached: false });
    }
    // With no backend answering, GET says its settings are this process's cached view.
    await pair.a.stop();
    await pair.b.stop();
    try {
      const detail = (await (await fetch(`${told.url}/v1/sequences/${name}`)).json()) as Record<string, unknown>;
      expect(detail).toMatchObject({ maxId: '3000', cached: true });
    } finally {
      await pair.a.restart();
      await pair.b.restart();
    }
  }, 60_000);

  it('with a backend down answers 503, and a repeat completes it (the CLI, as docs/migrating.md gives it)', async () => {
    expect(await putSequence(told.url, 'widen_later', { blockSize: 10, maxId: '1000000' })).toBe(201);
    await pair.b.stop();
    const env = { TICKETD_BACKENDS: pair.backendsUrl };
    const down = runCli(['sequences', 'set', 'widen_later', '--max-id', '5000000'], env);
    expect(down.status).toBe(1);
    expect(down.stderr).toMatch(/not raised on .*repeat the request to complete it \(TICKETD_BACKENDS_UNAVAILABLE\)$/);
    await pair.b.restart();
    const done = runCli(['sequences', 'set', 'widen_later', '--max-id', '5000000'], env);
    expect(done.stderr).toBe('');
    expect(done.stdout).toMatch(/^sequence widen_later has maxId 5000000;/);
    const list = runCli(['sequences', 'list'], env);
    expect(list.stdout).toMatch(/^widen_later\tblockSize=10\tstartAfter=0\tmaxId=5000000\t/m);
    const lower = runCli(['sequences', 'set', 'widen_later', '--max-id', '10'], env);
    expect([lower.status, lower.stderr]).toEqual([
      1,
      expect.stringMatching(/can only grow .*\(TICKETD_SEQUENCE_CONFLICT\)$/),
    ]);
  }, 60_000);
});
