import { postIds, TEST_ADMIN_TOKEN, useSharedServer } from '../support/ticketd.js';

const SIGNED_MAX = 9223372036854775807n;
const UNSIGNED_MAX = '18446744073709551615';
// The shared pair outlives this file: names of our own, new on every run.
const suffix = Math.random().toString(36).slice(2, 8);

async function put(base: string, name: string, body: object): Promise<{ status: number; maxId?: string }> {
  const res = await fetch(`${base}/v1/sequences/${name}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { maxId?: string };
  return { status: res.status, maxId: json.maxId };
}

describe('a new sequence defaults to maxId 2^63 − 1, so its IDs fit signed 64-bit columns', () => {
  const context = useSharedServer();

  it('an opaque sequence created without maxId hands out IDs that all fit a signed BIGINT', async () => {
    const name = `opaque_signed_${suffix}`;
    expect(await put(context.server.url, name, { blockSize: 10_000, ids: 'opaque' })).toEqual({
      status: 201,
      maxId: String(SIGNED_MAX),
    });
    const ids = (await postIds(context.server.url, name, 1000)).map(BigInt);
    expect(ids).toHaveLength(1000);
    // With 2^64 − 1 about half of them were above 2^63 − 1 (issue 42: 498 of 1,000).
    expect(ids.filter((id) => id > SIGNED_MAX)).toEqual([]);
    // They still spread over the domain: an opaque ID above 2^62 is the rule, not the exception.
    expect(ids.filter((id) => id > 1n << 62n).length).toBeGreaterThan(300);
  });

  it('an ordered sequence created without maxId has 2^63 − 1 too', async () => {
    expect(await put(context.server.url, `ordered_signed_${suffix}`, { blockSize: 10 })).toEqual({
      status: 201,
      maxId: String(SIGNED_MAX),
    });
  });

  it('an explicit 2^64 − 1 stays possible, and a repeat without maxId keeps it (a sequence made with the old default)', async () => {
    for (const ids of ['opaque', 'ordered']) {
      const name = `wide_${ids}_${suffix}`;
      expect(await put(context.server.url, name, { blockSize: 10_000, ids, maxId: UNSIGNED_MAX })).toEqual({
        status: 201,
        maxId: UNSIGNED_MAX,
      });
      // What ticketd 0.10 stored for a sequence created without maxId: repeating that PUT (or init) is no conflict.
      expect(await put(context.server.url, name, { blockSize: 10_000, ids })).toEqual({
        status: 200,
        maxId: UNSIGNED_MAX,
      });
      const read = (await (await fetch(`${context.server.url}/v1/sequences/${name}`)).json()) as { maxId: string };
      expect(read.maxId).toBe(UNSIGNED_MAX);
    }
  });

  it('a request without maxId still conflicts with a sequence of another explicit maxId', async () => {
    const name = `narrow_${suffix}`;
    expect((await put(context.server.url, name, { blockSize: 10, maxId: 2147483647 })).status).toBe(201);
    expect((await put(context.server.url, name, { blockSize: 10 })).status).toBe(409);
  });
});
