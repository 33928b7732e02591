/**
 * Retiring an opaque sequence under load from two front ends in this process and a third with two
 * worker processes, all serving it from cached blocks: once DELETE has answered, every route of it
 * (ids, next, blocks, id-key, GET) answers 410 on every front end and every worker within the
 * documented bound, nothing is issued after it, no ID was served twice, and a front end started
 * after the retirement refuses it at once.
 */
import { request } from 'node:http';
import type { RunningTicketd } from '../../src/server.js';
import { RETIRE_BOUND_MS as BOUND_MS } from '../../src/service/sequence-entry.js';
import { sleep } from '../support/id-ledger.js';
import {
  putSequence,
  sharedBackends,
  spawnTicketd,
  startInProcess,
  TEST_ADMIN_TOKEN,
  type ChildTicketd,
} from '../support/ticketd.js';

const TOKEN = 'opaque-retire-client-token-0123';

interface Answer {
  readonly status: number;
  readonly body: { ids?: string[]; id?: string; code?: string };
}

/** One request on a connection of its own, so a front end with worker processes answers from each in turn. */
function call(base: string, method: string, path: string, token: string = TOKEN): Promise<Answer> {
  return new Promise((done, fail) => {
    const req = request(
      `${base}${path}`,
      { method, agent: false, headers: { authorization: `Bearer ${token}` }, timeout: 5000 },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          done({ status: res.statusCode ?? 0, body: text === '' ? {} : (JSON.parse(text) as Answer['body']) }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', fail);
    req.end();
  });
}

describe('retiring an opaque sequence', () => {
  const name = `op_retire_${Date.now().toString(36)}`;
  const settings = { clientTokens: `${name}:${TOKEN}` };
  let a: RunningTicketd;
  let b: RunningTicketd;
  let c: ChildTicketd;

  beforeAll(async () => {
    a = await startInProcess(sharedBackends(), settings);
    b = await startInProcess(sharedBackends(), settings);
    c = await spawnTicketd(sharedBackends(), { TICKETD_CLIENT_TOKENS: settings.clientTokens, TICKETD_WORKERS: '2' });
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await c?.stop();
  });

  /** Every route of the sequence, as its own client (and GET as the admin). */
  const routes = (base: string): Promise<Answer>[] => [
    call(base, 'POST', `/v1/sequences/${name}/ids?count=5`),
    call(base, 'GET', `/v1/sequences/${name}/next`),
    call(base, 'POST', `/v1/sequences/${name}/blocks`),
    call(base, 'GET', `/v1/sequences/${name}/id-key`),
    call(base, 'GET', `/v1/sequences/${name}`),
    call(base, 'GET', `/v1/sequences/${name}`, TEST_ADMIN_TOKEN),
  ];

  it('answers 410 on every route of every front end and worker within the bound, and issues nothing after it', async () => {
    expect(await putSequence(a.url, name, { blockSize: 100_000, ids: 'opaque' })).toBe(201);
    const fronts = [
      { name: 'a', url: a.url },
      { name: 'b', url: b.url },
      { name: 'c', url: c.url },
    ];
    // Every front end (both of c's workers) holds cached blocks before the retirement.
    for (const f of fronts)
      for (let i = 0; i < 4; i++)
        expect((await call(f.url, 'POST', `/v1/sequences/${name}/ids?count=10`)).status).toBe(200);

    const owner = new Map<string, string>();
    const repeats: string[] = [];
    const late: string[] = [];
    let retiredAt = Number.POSITIVE_INFINITY;
    let running = true;
    const loops = Array.from({ length: 4 }, async (_, client) => {
      for (let n = client; running; n += 4) {
        const front = fronts[n % fronts.length]!;
        const sentAt = Date.now();
        const answer = await call(front.url, 'POST', `/v1/sequences/${name}/ids?count=${1 + (n % 40)}`).catch(
          (): Answer => ({ status: 0, body: {} }),
        );
        if (answer.status !== 200) {
          await sleep(20);
          continue;
        }
        if (sentAt > retiredAt + BOUND_MS)
          late.push(`${front.name} served ${answer.body.ids?.length} IDs ${sentAt - retiredAt} ms after DELETE`);
        for (const id of answer.body.ids ?? []) {
          const before = owner.get(id);
          if (before !== undefined) repeats.push(`${id} by ${before} and ${front.name}`);
          else owner.set(id, front.name);
        }
      }
    });
    await sleep(1500);

    const retired = await call(b.url, 'DELETE', `/v1/sequences/${name}`, TEST_ADMIN_TOKEN);
    retiredAt = Date.now();
    expect(retired.status).toBe(200);
    // The answering front end refuses at once, on every route.
    expect((await Promise.all(routes(b.url))).map((r) => r.status)).toEqual([410, 410, 410, 410, 410, 410]);

    // The others within the bound: six rounds in a row of 410 on every route (c's two workers take turns).
    const stoppedAfter = new Map<string, number>();
    while (Date.now() - retiredAt < BOUND_MS + 2000 && stoppedAfter.size < fronts.length) {
      for (const f of fronts) {
        if (stoppedAfter.has(f.name)) continue;
        let all = true;
        for (let round = 0; round < 6 && all; round++) {
          const statuses = (await Promise.all(routes(f.url))).map((r) => r.status);
          all = statuses.every((s) => s === 410);
        }
        if (all) stoppedAfter.set(f.name, Date.now() - retiredAt);
      }
      await sleep(100);
    }
    running = false;
    await Promise.all(loops);
    console.log(
      `opaque retired under load: ${owner.size} IDs, ${repeats.length} repeated; every route 410 after ${JSON.stringify(Object.fromEntries(stoppedAfter))} ms (bound ${BOUND_MS} ms)`,
    );
    expect([...stoppedAfter.keys()].sort()).toEqual(['a', 'b', 'c']);
    for (const ms of stoppedAfter.values()) expect(ms).toBeLessThanOrEqual(BOUND_MS);
    expect(late).toEqual([]);
    expect(repeats).toEqual([]);
    expect(owner.size).toBeGreaterThan(0);
    // It is retired, not exhausted: every 410 carries the retired code, and it stays so past the memo of refused names.
    await sleep(1500);
    for (const f of fronts)
      for (const r of await Promise.all(routes(f.url)))
        expect([r.status, r.body.code]).toEqual([410, 'TICKETD_SEQUENCE_RETIRED']);
  }, 60_000);

  it('is refused at once by a front end started after the retirement', async () => {
    await a.close();
    a = await startInProcess(sharedBackends(), settings);
    expect((await Promise.all(routes(a.url))).map((r) => [r.status, r.body.code])).toEqual(
      Array(6).fill([410, 'TICKETD_SEQUENCE_RETIRED']),
    );
  });
});
