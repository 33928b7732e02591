import { createTicketClient } from 'ticketd-client';
import type { RunningTicketd } from '../../src/server.js';
import { putSequence, sharedBackends, startInProcess } from '../support/ticketd.js';

const ORDERS_TOKEN = 'orders-client-token-0001';
const OTHER_TOKEN = 'other-sequence-token-0001';

describe('client tokens, rate limit and request limits', () => {
  let server: RunningTicketd;
  let limited: RunningTicketd;

  beforeAll(async () => {
    server = await startInProcess(sharedBackends(), {
      clientTokens: `guarded:${ORDERS_TOKEN},guarded_too:${OTHER_TOKEN}`,
      maxCount: '50',
    });
    limited = await startInProcess(sharedBackends(), { rateLimit: '5' });
    expect([201, 200]).toContain(await putSequence(server.url, 'guarded', { blockSize: 100 }));
  });
  afterAll(async () => {
    await server?.close();
    await limited?.close();
  });

  const next = (base: string, sequence: string, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${base}/v1/sequences/${sequence}/next`, { headers });

  it('a sequence with client tokens issues only to a bearer of one, and says why not otherwise', async () => {
    const none = await next(server.url, 'guarded');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="ticketd"');
    expect(await none.json()).toMatchObject({ code: 'TICKETD_UNAUTHORIZED', type: '/problems/unauthorized' });
    const wrong = await next(server.url, 'guarded', { authorization: `Bearer ${OTHER_TOKEN}` });
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toMatchObject({ code: 'TICKETD_FORBIDDEN' });
    const ok = await next(server.url, 'guarded', { authorization: `Bearer ${ORDERS_TOKEN}` });
    expect(ok.status).toBe(200);
    // The same holds for batches and block leases; a token in the query string is not looked at.
    expect(
      (await fetch(`${server.url}/v1/sequences/guarded/ids?count=2&token=${ORDERS_TOKEN}`, { method: 'POST' })).status,
    ).toBe(401);
    expect(
      (
        await fetch(`${server.url}/v1/sequences/guarded/blocks`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ORDERS_TOKEN}` },
        })
      ).status,
    ).toBe(200);
  });

  it('the SDK sends its token as a bearer token; without one its lease is refused', async () => {
    const withToken = createTicketClient({ urls: [server.url], sequence: 'guarded', token: ORDERS_TOKEN });
    const ids = await withToken.nextBatch(150);
    expect(new Set(ids).size).toBe(150);
    await withToken.close();
    const without = createTicketClient({ urls: [server.url], sequence: 'guarded' });
    await expect(without.next()).rejects.toThrow(/: 401 Unauthorized: sequence guarded needs a client token/);
    await without.close();
  });

  it('sequences without tokens stay open', async () => {
    expect((await next(server.url, 'default')).status).toBe(200);
  });

  it('refuses a count above TICKETD_MAX_COUNT and a body above 16 KiB', async () => {
    const many = await fetch(`${server.url}/v1/sequences/default/ids?count=51`, { method: 'POST' });
    expect(many.status).toBe(400);
    expect(((await many.json()) as { detail: string }).detail).toBe('count must be an integer from 1 to 50; got 51');
    const big = await fetch(`${server.url}/v1/sequences/huge_body`, {
      method: 'PUT',
      headers: { authorization: 'Bearer test-admin-token-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ blockSize: 10, padding: 'x'.repeat(20_000) }),
    });
    expect(big.status).toBe(413);
    expect(big.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('over the rate limit, answers 429 with Retry-After, per token', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await next(limited.url, 'default')).status);
    // A burst of one second's worth (5), then refusals until the bucket refills.
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(5);
    const refused = await next(limited.url, 'default');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({
      code: 'TICKETD_RATE_LIMITED',
      type: '/problems/rate-limited',
      status: 429,
    });
    // Another credential has its own bucket.
    expect((await next(limited.url, 'default', { authorization: `Bearer ${'t'.repeat(20)}` })).status).toBe(200);
  });
});
