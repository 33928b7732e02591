/**
 * The exact answers the contract left to choose: a worker pool list with no backend answering, a
 * lease released twice, a worker ID past 65535, an ID of 23 digits, and a backend fault on the
 * admin routes (a 503 naming the backend, never a 500).
 */
import type { RunningTicketd } from '../../src/server.js';
import { putSequence, startInProcess, startPrivatePair, TEST_ADMIN_TOKEN } from '../support/ticketd.js';
import { putPool, send, takeLease } from '../support/worker-pools.js';

describe('answers with backends up and down', () => {
  let pair: Awaited<ReturnType<typeof startPrivatePair>>;
  let server: RunningTicketd;
  const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

  beforeAll(async () => {
    pair = await startPrivatePair();
    server = await startInProcess(pair.backendsUrl);
    expect(await putSequence(server.url, 'answers', { blockSize: 10 })).toBe(201);
    expect((await putPool(server.url, 'apool', { workerBits: 3 })).status).toBe(201);
  });

  afterAll(async () => {
    await server?.close();
    await pair?.dispose();
  });

  it('answers 200 to a release repeated with the same epoch (its first answer lost), 409 to another epoch', async () => {
    const lease = await takeLease(server.url, 'apool', 'twice');
    const base = `${server.url}/v1/worker-pools/apool/leases/${String(lease.body.workerId)}/release`;
    for (let i = 0; i < 2; i++) {
      const released = await send(base, { epoch: lease.body.epoch, lastUsedMs: Date.now() });
      expect([released.status, released.body]).toEqual([200, { released: true }]);
    }
    const other = await send(base, { epoch: '1', lastUsedMs: 0 });
    expect([other.status, other.body.code]).toEqual([409, 'TICKETD_LEASE_LOST']);
  });

  it('answers 400 to a worker ID above 65535 or outside the pool, not 409', async () => {
    for (const worker of ['70000', '8']) {
      const answer = await send(`${server.url}/v1/worker-pools/apool/leases/${worker}/renew`, { epoch: '1' });
      expect([worker, answer.status, answer.body.code]).toEqual([worker, 400, 'TICKETD_BAD_REQUEST']);
    }
  });

  it("answers 400 to an ID of 23 digits, which the document's pattern (at most 20) also refuses", async () => {
    const res = await fetch(`${server.url}/v1/sequences/answers/ids/12345678901234567890123`, { headers: admin });
    expect(res.status).toBe(400);
    const pattern = (
      (await (await fetch(`${server.url}/openapi.json`)).json()) as {
        components: unknown;
        paths: Record<string, { get: { parameters: { name: string; schema: { pattern: string } }[] } }>;
      }
    ).paths['/v1/sequences/{name}/ids/{id}']!.get.parameters.find((p) => p.name === 'id')!.schema.pattern;
    expect(new RegExp(pattern).test('12345678901234567890123')).toBe(false);
    expect(new RegExp(pattern).test('18446744073709551615')).toBe(true);
  });

  it('answers 503 naming the backend, never 500, on decode, release and pool routes with backends down', async () => {
    await pair.b.stop();
    const bLabel = pair.b.url.replace(/^mysql:\/\/root@/, 'mysql://');
    const decode = await fetch(`${server.url}/v1/sequences/answers/ids/1000000020`, { headers: admin }); // ticket 100000002: B's class (2 mod 16), never issued
    const release = await fetch(`${server.url}/v1/sequences/answers/release`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: '{"backend":"B"}',
    });
    const putPoolDown = await putPool(server.url, 'bpool', { workerBits: 2 });
    for (const [what, status, body, retryAfter] of [
      [
        'decode',
        decode.status,
        (await decode.json()) as { code: string; detail: string },
        decode.headers.get('retry-after'),
      ],
      [
        'release',
        release.status,
        (await release.json()) as { code: string; detail: string },
        release.headers.get('retry-after'),
      ],
      [
        'PUT pool',
        putPoolDown.status,
        putPoolDown.body as { code: string; detail: string },
        putPoolDown.headers.get('retry-after'),
      ],
    ] as const) {
      expect([what, status, body.code]).toEqual([what, 503, 'TICKETD_BACKENDS_UNAVAILABLE']);
      expect(body.detail).toContain(bLabel);
      expect(retryAfter).not.toBeNull();
    }
    await pair.a.stop();
    // No backend answered: the pools cannot be listed, which is not "there are no pools".
    const list = await fetch(`${server.url}/v1/worker-pools`);
    expect([list.status, ((await list.json()) as { code: string }).code]).toEqual([
      503,
      'TICKETD_BACKENDS_UNAVAILABLE',
    ]);
  });
});
