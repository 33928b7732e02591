import { postIds, putSequence, usePrivatePairAndServer } from '../support/ticketd.js';

describe('a backend that dies', () => {
  const context = usePrivatePairAndServer();

  it('kill -9 of backend A: every request is still served, from B, and A rejoins after restart', async () => {
    expect(await putSequence(context.server.url, 'one_down', { blockSize: 20 })).toBe(201);
    const seen = new Set<string>();
    let total = 0;
    const take = async (n: number, count = 7): Promise<void> => {
      for (let i = 0; i < n; i++) {
        for (const id of await postIds(context.server.url, 'one_down', count)) seen.add(id);
        total += count;
      }
    };
    await take(50);
    context.pair.a.signal('SIGKILL');
    await context.pair.a.exited();
    await take(300);
    const duringOutage = [...seen].map((id) => BigInt(id) / 20n);
    await context.pair.a.restart();
    // Background probes close A's breaker again (backoff at most 2 s; more on a loaded machine).
    const deadline = Date.now() + 20_000;
    while (context.server.service.backendStatus()[0]!.state !== 'up' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(context.server.service.backendStatus()[0]!.state).toBe('up');
    // Then enough IDs for several refills (each grows to 256 tickets).
    await take(50, 1000);
    expect(seen.size).toBe(total);
    const after = [...seen].map((id) => BigInt(id) / 20n).slice(duringOutage.length);
    // After A is back, its odd tickets are used again.
    expect(after.some((t) => t % 2n === 1n)).toBe(true);
  });

  it('both backends down: cached IDs are served, then 503 problem+json with Retry-After; recovery after restart', async () => {
    await postIds(context.server.url, 'one_down', 1);
    context.pair.a.signal('SIGKILL');
    context.pair.b.signal('SIGKILL');
    await Promise.all([context.pair.a.exited(), context.pair.b.exited()]);
    let served = 0;
    let res: Response;
    for (;;) {
      res = await fetch(`${context.server.url}/v1/sequences/one_down/next`);
      if (res.status !== 200) break;
      await res.arrayBuffer();
      served++;
      expect(served).toBeLessThan(100_000);
    }
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await res.json()) as { code: string }).code).toBe('TICKETD_BACKENDS_UNAVAILABLE');
    const ready = await fetch(`${context.server.url}/readyz`);
    expect(ready.status).toBe(503);
    await ready.arrayBuffer();

    await Promise.all([context.pair.a.restart(), context.pair.b.restart()]);
    const deadline = Date.now() + 15_000;
    let ids: string[] | undefined;
    while (ids === undefined && Date.now() < deadline) {
      ids = await postIds(context.server.url, 'one_down', 5).catch(() => undefined);
      if (ids === undefined) await new Promise((r) => setTimeout(r, 200));
    }
    expect(ids).toHaveLength(5);
  });
});
