/**
 * What a client without the admin token reads of the backends, on a real server over real MariaDB:
 * letters (A, B), never a host, port, database URL, account or a driver's error text, on every route
 * that tells backends (/readyz, GET /v1/sequences, GET /v1/sequences/{name}, the status page, 503
 * problems), with both backends up and with both dead. The admin token still reads every detail.
 */
import { postIds, putSequence, TEST_ADMIN_TOKEN, usePrivatePairAndServer } from '../support/ticketd.js';
import { putPool } from '../support/worker-pools.js';

const POOL = `pool_${Math.random().toString(36).slice(2, 8)}`;
const ROUTES = [
  '/readyz',
  '/v1/sequences',
  '/v1/sequences/visible',
  '/v1/sequences/sealed',
  `/v1/worker-pools/${POOL}`,
  '/',
];

describe('clients without the admin token see backends by letter only', () => {
  const context = usePrivatePairAndServer();

  /** Everything that would tell a stranger where the backends are, or who ticketd is on them. */
  function secrets(): string[] {
    const ports = [context.pair.a.port, context.pair.b.port];
    return [
      'mysql://',
      'root@',
      "'root'",
      'ECONNREFUSED',
      'connect ',
      ...ports.flatMap((p) => [`127.0.0.1:${p}`, `:${p}`, String(p)]),
    ];
  }

  async function read(path: string, admin: boolean, init: RequestInit = {}): Promise<{ status: number; text: string }> {
    const res = await fetch(`${context.server.url}${path}`, {
      ...init,
      headers: {
        ...(admin ? { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } : {}),
        ...(init.headers as Record<string, string> | undefined),
      },
    });
    return { status: res.status, text: await res.text() };
  }

  function leaks(text: string): string[] {
    return secrets().filter((s) => text.includes(s));
  }

  it('with both backends up: letters to strangers, addresses to the admin', async () => {
    expect(await putSequence(context.server.url, 'visible', { blockSize: 1 })).toBe(201);
    expect(await putSequence(context.server.url, 'sealed', { blockSize: 10_000, ids: 'opaque' })).toBe(201);
    expect(await putSequence(context.server.url, 'dry', { blockSize: 1 })).toBe(201);
    expect(await postIds(context.server.url, 'visible', 3)).toHaveLength(3);
    expect((await putPool(context.server.url, POOL, { workerBits: 3 })).status).toBe(201);
    for (const path of ROUTES) {
      const stranger = await read(path, false);
      expect([path, stranger.status, leaks(stranger.text)]).toEqual([path, 200, []]);
    }
    const ready = JSON.parse((await read('/readyz', false)).text) as { backends: { backend: string }[] };
    expect(ready.backends.map((b) => b.backend)).toEqual(['A', 'B']);
    const list = JSON.parse((await read('/v1/sequences', false)).text) as {
      sequences: { name: string; backends: string[] }[];
    };
    expect(list.sequences.find((s) => s.name === 'visible')?.backends).toEqual(['A', 'B']);
    const one = JSON.parse((await read('/v1/sequences/visible', false)).text) as { backends: { backend: string }[] };
    expect(one.backends.map((b) => b.backend)).toEqual(['A', 'B']);
    // The admin reads the addresses, as before.
    for (const path of ['/readyz', '/v1/sequences', '/v1/sequences/visible']) {
      expect((await read(path, true)).text).toContain(`127.0.0.1:${context.pair.a.port}`);
    }
  });

  it('with both backends dead: states by letter to strangers, every error to the admin', async () => {
    // A first: B serves alone, its tickets unclaimed; then B too.
    context.pair.a.signal('SIGKILL');
    await context.pair.a.exited();
    expect(await postIds(context.server.url, 'visible', 2)).toHaveLength(2);
    // The pool's owner A does not answer: a stranger reads it as A.
    const pool = await read(`/v1/worker-pools/${POOL}`, false);
    expect([pool.status, leaks(pool.text)]).toEqual([200, []]);
    expect((JSON.parse(pool.text) as { unanswered: string[] }).unanswered).toEqual(['backend A']);
    context.pair.b.signal('SIGKILL');
    await context.pair.b.exited();
    expect([context.pair.a.pid, context.pair.b.pid]).toEqual([undefined, undefined]);

    const issuing = [
      ['/v1/sequences/dry/ids?count=5', { method: 'POST' }],
      ['/v1/sequences/dry/next', {}],
      ['/v1/sequences/dry/blocks', { method: 'POST' }],
    ] as const;
    for (const [path, init] of issuing) {
      const stranger = await read(path, false, init);
      expect([path, stranger.status, leaks(stranger.text)]).toEqual([path, 503, []]);
      expect(JSON.parse(stranger.text)).toMatchObject({
        code: 'TICKETD_BACKENDS_UNAVAILABLE',
        detail: expect.stringMatching(/backends: A \w+, B \w+/) as unknown,
      });
      const admin = await read(path, true, init);
      expect(admin.status).toBe(503);
      expect(admin.text).toContain(`127.0.0.1:${context.pair.b.port}`);
    }
    for (const path of ROUTES) {
      const stranger = await read(path, false);
      expect([path, leaks(stranger.text)]).toEqual([path, []]);
    }
    const ready = JSON.parse((await read('/readyz', false)).text) as {
      backends: { backend: string; lastError?: string }[];
    };
    expect(ready.backends.map((b) => [b.backend, b.lastError])).toEqual([
      ['A', 'failed (the error is shown with the admin token)'],
      ['B', 'failed (the error is shown with the admin token)'],
    ]);
    const adminReady = JSON.parse((await read('/readyz', true)).text) as {
      backends: { lastError?: string; lastErrorAt?: string }[];
    };
    expect(
      adminReady.backends.every(
        (b) => b.lastError !== undefined && leaks(b.lastError).length > 0 && b.lastErrorAt !== undefined,
      ),
    ).toBe(true);
  });

  it("with both dead, the admin's 503 names B's own error, not that no peer takes its claims", async () => {
    const admin = JSON.parse((await read('/v1/sequences/visible/ids?count=1000', true, { method: 'POST' })).text) as {
      detail: string;
    };
    const partOfB = admin.detail.split(';').find((part) => part.includes(`127.0.0.1:${context.pair.b.port}`));
    expect(partOfB).toBeDefined();
    expect(partOfB).not.toContain('no peer can take its claims');
  });
});
