import { postIds, putSequence, useSharedServer } from '../support/ticketd.js';

const TWO_POW_53 = 2n ** 53n;
const MAX_UINT64 = 2n ** 64n - 1n;

describe('IDs at the edges of the number line', () => {
  const context = useSharedServer();

  it('returns exact string IDs above 2^53 for startAfter 9007199254740990 and blockSize 10', async () => {
    expect(await putSequence(context.server.url, 'above_2_53', { blockSize: 10, startAfter: 9007199254740990 })).toBe(
      201,
    );
    const ids = (await postIds(context.server.url, 'above_2_53', 25)).map(BigInt);
    expect(ids).toHaveLength(25);
    expect(new Set(ids).size).toBe(25);
    for (const id of ids) expect(id > TWO_POW_53).toBe(true);
    // Within one block the IDs are consecutive: no rounding through doubles.
    expect(ids[1]! - ids[0]!).toBe(1n);
    expect(ids[0]! % 10n).toBe(0n);
  });

  it('stops exactly at maxId 2147483647 with the sequence-exhausted problem, never past it', async () => {
    expect(
      await putSequence(context.server.url, 'legacy_int', { blockSize: 10, startAfter: 2147483600, maxId: 2147483647 }),
    ).toBe(201);
    const ids: bigint[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 20; i++) {
      last = await fetch(`${context.server.url}/v1/sequences/legacy_int/ids?count=3`, { method: 'POST' });
      if (last.status !== 200) break;
      ids.push(...((await last.json()) as { ids: string[] }).ids.map(BigInt));
    }
    expect(last!.status).toBe(409);
    expect(last!.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await last!.json()) as { type: string; code: string };
    expect(problem).toMatchObject({ type: '/problems/sequence-exhausted', code: 'TICKETD_SEQUENCE_EXHAUSTED' });
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id > 2147483600n && id <= 2147483647n).toBe(true);
    // What is left can still be had in smaller requests; then single IDs run out too.
    const rest: bigint[] = [];
    for (;;) {
      const res = await fetch(`${context.server.url}/v1/sequences/legacy_int/next`);
      if (res.status !== 200) {
        expect(res.status).toBe(409);
        break;
      }
      rest.push(BigInt(((await res.json()) as { id: string }).id));
    }
    const all = [...ids, ...rest].sort((a, b) => (a < b ? -1 : 1));
    expect(new Set(all).size).toBe(all.length);
    // Tickets 214748361 to 214748364 (the first whose block lies above startAfter, to the one that
    // reaches maxId): every ID from 2147483610 to 2147483647, once each, and nothing past it.
    expect(all).toEqual(Array.from({ length: 38 }, (_, i) => 2147483610n + BigInt(i)));
  });

  it('issues tickets above 2^63 exactly (mysql2 reads them signed) up to 2^64 − 1, then reports exhaustion', async () => {
    expect(
      await putSequence(context.server.url, 'top_of_u64', {
        blockSize: 1,
        startAfter: String(MAX_UINT64 - 12n),
        maxId: String(MAX_UINT64),
      }),
    ).toBe(201);
    const ids: bigint[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${context.server.url}/v1/sequences/top_of_u64/next`);
      if (res.status !== 200) {
        expect(res.status).toBe(409);
        break;
      }
      ids.push(BigInt(((await res.json()) as { id: string }).id));
    }
    expect(ids.length).toBeGreaterThan(5);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id > MAX_UINT64 - 12n && id <= MAX_UINT64).toBe(true);
  });
});
