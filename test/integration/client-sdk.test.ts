import { createTicketClient } from 'ticketd-client';
import { LeaseFailedError, NoBufferedIdsError } from '../../src/core/errors.js';
import { freePort } from '../../src/launcher/local-mysql.js';
import type { RunningTicketd } from '../../src/server.js';
import { putSequence, sharedBackends, startInProcess } from '../support/ticketd.js';

describe('client SDK', () => {
  let servers: RunningTicketd[] = [];

  beforeAll(async () => {
    servers = [await startInProcess(sharedBackends()), await startInProcess(sharedBackends())];
    expect(await putSequence(servers[0]!.url, 'sdk_small', { blockSize: 100 })).toBe(201);
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it('two clients (as two processes would) hand out 100,000 IDs with no duplicate', async () => {
    const clients = servers.map((s) => createTicketClient({ urls: [s.url], sequence: 'sdk_small' }));
    const seen = new Set<bigint>();
    let total = 0;
    for (let i = 0; i < 50_000; i++) {
      for (const client of clients) {
        seen.add(await client.next());
        total++;
      }
    }
    expect(seen.size).toBe(total);
    await Promise.all(clients.map((c) => c.close()));
  });

  it('nextSync throws until a block is buffered, then serves without waiting; nextBatch keeps order', async () => {
    const client = createTicketClient({ urls: [servers[0]!.url], sequence: 'default' });
    expect(() => client.nextSync()).toThrow(NoBufferedIdsError);
    const first = await client.next();
    const second = client.nextSync();
    expect(second).toBe(first + 1n);
    const batch = await client.nextBatch(5);
    expect(batch).toEqual([second + 1n, second + 2n, second + 3n, second + 4n, second + 5n]);
    await client.close();
  });

  it('fails over from a URL where nothing listens, and from a server that went away', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const spare = await startInProcess(sharedBackends());
    const client = createTicketClient({ urls: [dead, spare.url, servers[1]!.url], sequence: 'sdk_small' });
    const seen = new Set<bigint>();
    for (let i = 0; i < 300; i++) seen.add(await client.next());
    await spare.close();
    for (let i = 0; i < 300; i++) seen.add(await client.next());
    expect(seen.size).toBe(600);
    await client.close();
  });

  it('does not fail over on a 4xx: an unknown sequence is refused at once', async () => {
    const client = createTicketClient({ urls: [servers[0]!.url, servers[1]!.url], sequence: 'no_such_sdk_seq' });
    const error = await client.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeaseFailedError);
    // One URL tried: the second would say the same.
    expect((error as Error).message).toMatch(
      /: http:\/\/127\.0\.0\.1:\d+: 404 Not Found: sequence no_such_sdk_seq does not exist$/,
    );
    expect((error as Error).message.split('; ')).toHaveLength(1);
    await client.close();
  });

  it('names the cause when no URL answers: nothing listening, no such host', async () => {
    const port = await freePort();
    const client = createTicketClient({
      urls: [`http://127.0.0.1:${port}`, 'http://no-such-host.invalid:8080'],
      sequence: 'default',
    });
    const error = await client.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeaseFailedError);
    const [refused, unknown] = (error as Error).message.replace(/^[^:]*: /, '').split('; ');
    expect(refused).toBe(
      `http://127.0.0.1:${port}: fetch failed: connect ECONNREFUSED 127.0.0.1:${port} (nothing listens there: is ticketd running on that port?)`,
    );
    expect(unknown).toMatch(
      /^http:\/\/no-such-host\.invalid:8080: fetch failed: getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid \((no such host|the host name could not be resolved now)\)$/,
    );
    await client.close();
  });
});
