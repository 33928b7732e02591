/**
 * Strict sequences (docs/strict-sequences.md) on the shared pair, with three front ends in this
 * process: real-time order across them, the leader shown, forwarding, and what a strict sequence refuses.
 */
import type { RunningTicketd } from '../../src/server.js';
import { checkLinearizable, describeVerdict } from '../support/linearizability.js';
import { strictLoad } from '../support/strict-load.js';
import { metricSum, putSequence, sharedBackends, startInProcess, TEST_ADMIN_TOKEN } from '../support/ticketd.js';

describe('strict sequences', () => {
  const fronts: RunningTicketd[] = [];
  const name = `strict_${process.pid}`;

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) fronts.push(await startInProcess(sharedBackends()));
  });

  afterAll(async () => {
    await Promise.all(fronts.map((f) => f.close()));
  });

  it('serves IDs in real-time order across three front ends, through one leader that the others forward to', async () => {
    expect(await putSequence(fronts[0]!.url, name, { blockSize: 1000, ids: 'strict' })).toBe(201);
    const load = strictLoad(name, () => new Map(fronts.map((f, i) => [`fe${i + 1}`, f.url])));
    await new Promise((r) => setTimeout(r, 4000));
    await load.stop();
    const verdict = checkLinearizable(load.history);
    console.log(`strict, three front ends on one process: ${describeVerdict(verdict)}; statuses ${JSON.stringify(load.statuses)}`);
    expect(verdict.outOfOrder).toBe(0);
    expect(verdict.repeated).toEqual([]);
    expect(verdict.unsorted).toBe(0);
    expect(verdict.operations).toBeGreaterThan(500);
    expect(Object.keys(load.statuses)).toEqual(['200']);
    // One leads; the other two forwarded.
    const shown = await Promise.all(fronts.map(async (f) => (await (await fetch(`${f.url}/v1/sequences/${name}`)).json()) as { ids: string; leader: { epoch: string; url: string; self: boolean } | null }));
    expect(shown.every((s) => s.ids === 'strict')).toBe(true);
    expect(shown.filter((s) => s.leader?.self === true)).toHaveLength(1);
    expect(new Set(shown.map((s) => s.leader?.epoch)).size).toBe(1);
    const forwarded = await Promise.all(fronts.map((f) => metricSum(f.url, 'ticketd_strict_forwarded_requests_total', { sequence: name })));
    expect(forwarded.filter((n) => n > 0)).toHaveLength(2);
  }, 30_000);

  it('refuses a block (409 TICKETD_STRICT_NO_BLOCKS), a widening, and a strict-range call to a follower (421)', async () => {
    const blocks = await fetch(`${fronts[1]!.url}/v1/sequences/${name}/blocks`, { method: 'POST' });
    expect(blocks.status).toBe(409);
    expect(((await blocks.json()) as { code: string }).code).toBe('TICKETD_STRICT_NO_BLOCKS');
    const widened = await fetch(`${fronts[0]!.url}/v1/sequences/${name}`, { method: 'PATCH', headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ maxId: '99999999999' }) });
    expect(widened.status).toBe(409);
    const leaderUrl = ((await (await fetch(`${fronts[0]!.url}/v1/sequences/${name}`)).json()) as { leader: { url: string } }).leader.url;
    const follower = fronts.find((f) => f.peerUrl !== leaderUrl)!;
    const misdirected = await fetch(`${follower.peerUrl}/v1/sequences/${name}/strict-range?count=2`, { method: 'POST' });
    expect(misdirected.status).toBe(421);
    expect(((await misdirected.json()) as { code: string }).code).toBe('TICKETD_NOT_LEADER');
    const direct = await fetch(`${leaderUrl}/v1/sequences/${name}/strict-range?count=2`, { method: 'POST' });
    expect(direct.status).toBe(200);
    const range = (await direct.json()) as { first: string; last: string };
    expect(BigInt(range.last) - BigInt(range.first)).toBe(1n);
  });
});
