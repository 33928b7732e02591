import { postIds, putSequence, TEST_ADMIN_TOKEN, usePrivatePairAndServer } from '../support/ticketd.js';

describe('creating and listing sequences', () => {
  const context = usePrivatePairAndServer();

  it('PUT answers 201 when created, 200 when identical, 409 when the settings differ', async () => {
    expect(await putSequence(context.server.url, 'orders', { blockSize: 100, maxId: 2147483647 })).toBe(201);
    expect(await putSequence(context.server.url, 'orders', { blockSize: 100, maxId: '2147483647' })).toBe(200);
    expect(await putSequence(context.server.url, 'orders', { blockSize: 200 })).toBe(409);
    const ids = await postIds(context.server.url, 'orders', 3);
    expect(ids).toHaveLength(3);
  });

  it('GET lists every sequence with the backends that have it, and describes one', async () => {
    const admin = { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } };
    const list = (await (await fetch(`${context.server.url}/v1/sequences`, admin)).json()) as {
      sequences: { name: string; blockSize: string; backends: string[] }[];
    };
    const orders = list.sequences.find((s) => s.name === 'orders');
    expect(orders).toMatchObject({ blockSize: '100', maxId: '2147483647', startAfter: '0' });
    expect(orders!.backends).toEqual([
      context.pair.a.url.replace('root@', ''),
      context.pair.b.url.replace('root@', ''),
    ]);
    // Without the admin token, by letter (A is the first in TICKETD_BACKENDS).
    const open = (await (await fetch(`${context.server.url}/v1/sequences`)).json()) as {
      sequences: { name: string; backends: string[] }[];
    };
    expect(open.sequences.find((s) => s.name === 'orders')!.backends).toEqual(['A', 'B']);
    expect(list.sequences.map((s) => s.name)).toContain('default');

    const one = (await (await fetch(`${context.server.url}/v1/sequences/orders`)).json()) as {
      name: string;
      backends: { backend: string; state: string }[];
      cache: { issued: number };
    };
    expect(one.name).toBe('orders');
    expect(one.cache.issued).toBe(3);
    expect(one.backends).toHaveLength(2);
  });

  it('with a backend down, PUT answers 503 and a repeat after it is back completes the sequence', async () => {
    await context.pair.b.stop();
    expect(await putSequence(context.server.url, 'half_made', { blockSize: 10 })).toBe(503);
    await context.pair.b.restart();
    expect(await putSequence(context.server.url, 'half_made', { blockSize: 10 })).toBe(201);
    expect(await putSequence(context.server.url, 'half_made', { blockSize: 10 })).toBe(200);
    const list = (await (await fetch(`${context.server.url}/v1/sequences`)).json()) as {
      sequences: { name: string; backends: string[] }[];
    };
    expect(list.sequences.find((s) => s.name === 'half_made')!.backends).toHaveLength(2);
  });
});
