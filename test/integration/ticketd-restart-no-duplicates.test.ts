import { postIds, putSequence, sharedBackends, spawnTicketd, type ChildTicketd } from '../support/ticketd.js';

const SEQUENCE = 'restart_test';

describe('kill -9 of one ticketd instance mid-run', () => {
  const children: ChildTicketd[] = [];

  afterAll(async () => {
    await Promise.all(children.map((c) => c.stop('SIGKILL')));
  });

  it('loses only its cached IDs (a gap), never issues one twice', async () => {
    const [first, second] = await Promise.all([spawnTicketd(sharedBackends()), spawnTicketd(sharedBackends())]);
    children.push(first, second);
    expect(await putSequence(first.url, SEQUENCE, { blockSize: 500 })).toBe(201);
    const seen = new Set<string>();
    let total = 0;
    let stop = false;
    let failures = 0;
    const load = async (url: () => string): Promise<void> => {
      while (!stop) {
        try {
          const ids = await postIds(url(), SEQUENCE, 50);
          for (const id of ids) seen.add(id);
          total += ids.length;
        } catch {
          failures++;
        }
      }
    };
    let victimUrl = first.url;
    const loaders = [load(() => victimUrl), load(() => second.url), load(() => second.url)];
    await new Promise((r) => setTimeout(r, 1000));
    expect(await first.stop('SIGKILL')).toBeNull();
    const restarted = await spawnTicketd(sharedBackends());
    children.push(restarted);
    victimUrl = restarted.url;
    await new Promise((r) => setTimeout(r, 1000));
    stop = true;
    await Promise.all(loaders);
    expect(total).toBeGreaterThan(10_000);
    expect(seen.size).toBe(total);
    // Requests to the killed instance fail while it is down; the other instance never does.
    expect(failures).toBeLessThan(total / 50);
  });
});
