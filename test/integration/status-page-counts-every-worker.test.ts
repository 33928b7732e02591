/**
 * `serve --workers 2`: the status page counts the whole process, as /metrics does, whichever worker
 * answers (issue 42: "IDs handed out" alternated 9 / 4 / 9 / 4 between reloads), and
 * ticketd_build_info says the version once per process, not once per worker.
 */
import { THIS_VERSION } from '../../src/core/versions.js';
import { putSequence, sharedBackends, spawnTicketd, type ChildTicketd } from '../support/ticketd.js';

describe('a process of two workers on its status page and /metrics', () => {
  let ticketd: ChildTicketd;
  // The shared pair outlives this file: a sequence of this run's own.
  const sequence = `workers_${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    ticketd = await spawnTicketd(sharedBackends(), { TICKETD_WORKERS: '2' });
    for (let i = 0; i < 100 && ticketd.logs.filter((l) => l.includes('"msg":"ticketd listening"')).length < 2; i++)
      await new Promise((r) => setTimeout(r, 100));
  }, 60_000);

  afterAll(async () => {
    await ticketd?.stop('SIGTERM');
  });

  it("shows every worker's IDs handed out on every reload", async () => {
    const pids = new Set(
      ticketd.logs
        .filter((l) => l.includes('"msg":"ticketd listening"'))
        .map((l) => (JSON.parse(l) as { pid: number }).pid),
    );
    expect(pids.size).toBe(2);
    expect(await putSequence(ticketd.url, sequence, { blockSize: 100 })).toBe(201);
    // Many small requests, several at once: both workers serve some.
    let issued = 0;
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          fetch(`${ticketd.url}/v1/sequences/${sequence}/ids?count=3`, { method: 'POST' }),
        ),
      );
      for (const res of answers) {
        expect(res.status).toBe(200);
        issued += ((await res.json()) as { ids: string[] }).ids.length;
      }
    }
    const seen: string[] = [];
    for (let reload = 0; reload < 12; reload++) {
      const page = await (await fetch(`${ticketd.url}/`)).text();
      // The sequence's row, if the answering worker served it: its fourth cell is the IDs handed out.
      const cells = new RegExp(`<tr[^>]*><td>${sequence}</td>((?:<td>[^<]*</td>)+)</tr>`)
        .exec(page)?.[1]
        ?.match(/<td>([^<]*)<\/td>/g)
        ?.map((c) => c.slice(4, -5));
      expect(cells).toBeDefined();
      seen.push(cells![2]!);
    }
    console.log(
      `status page under --workers 2: IDs handed out on 12 reloads: ${[...new Set(seen)].join(', ')} (issued ${issued})`,
    );
    expect(new Set(seen)).toEqual(new Set([String(issued)]));
  }, 60_000);

  it('says its version in ticketd_build_info, once per process', async () => {
    const text = await (await fetch(`${ticketd.url}/metrics`)).text();
    expect(text.split('\n').filter((l) => l.startsWith('ticketd_build_info'))).toEqual([
      `ticketd_build_info{version="${THIS_VERSION}"} 1`,
    ]);
  });
});
