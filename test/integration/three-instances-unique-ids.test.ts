import { Allocator } from '../../src/allocator/allocator.js';
import { loadConfig } from '../../src/config/load-config.js';
import { silentLogger } from '../../src/logger.js';
import type { RunningTicketd } from '../../src/server.js';
import { nextId, postIds, putSequence, sharedBackends, startInProcess } from '../support/ticketd.js';

const SEQUENCE = 'three_instances';
const BLOCK_SIZE = 1000n;
const TARGET_IDS = 200_000;

describe('three ticketd instances on the same two backends', () => {
  let servers: RunningTicketd[] = [];

  beforeAll(async () => {
    servers = await Promise.all([0, 1, 2].map(() => startInProcess(sharedBackends())));
    expect(await putSequence(servers[0]!.url, SEQUENCE, { blockSize: Number(BLOCK_SIZE) })).toBe(201);
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it('together issue 200,000 IDs over HTTP, batches and single IDs mixed, with no duplicate and every block of its backend’s parity', async () => {
    const seen = new Set<string>();
    let issued = 0;
    let round = 0;
    // Four concurrent clients per instance, so refills, deadlock retries and round-robin all happen.
    const client = async (server: RunningTicketd, seed: number): Promise<void> => {
      while (issued < TARGET_IDS) {
        round++;
        const ids =
          (round + seed) % 3 === 0
            ? [await nextId(server.url, SEQUENCE)]
            : await postIds(server.url, SEQUENCE, 1 + ((round * 7919 + seed) % 1000));
        for (const id of ids) seen.add(id);
        issued += ids.length;
      }
    };
    await Promise.all(servers.flatMap((s, i) => [0, 1, 2, 3].map((c) => client(s, i * 4 + c))));
    expect(issued).toBeGreaterThanOrEqual(TARGET_IDS);
    expect(seen.size).toBe(issued);

    // Every ID's ticket must be one its backend really issued: odd tickets from A, even from B,
    // none beyond the backend's counter. Both backends must have been used.
    const allocator = new Allocator({
      backends: loadConfig({ backends: sharedBackends() }).backends,
      logger: silentLogger,
    });
    try {
      const [lastA, lastB] = (await allocator.fleet.lastTickets(SEQUENCE)) as [bigint, bigint];
      expect(lastA % 2n).toBe(1n);
      expect(lastB % 2n).toBe(0n);
      const tickets = new Set<bigint>();
      for (const id of seen) tickets.add(BigInt(id) / BLOCK_SIZE);
      let odd = 0;
      let even = 0;
      for (const t of tickets) {
        if (t % 2n === 1n) {
          odd++;
          expect(t <= lastA).toBe(true);
        } else {
          even++;
          expect(t <= lastB).toBe(true);
        }
      }
      expect(odd).toBeGreaterThan(0);
      expect(even).toBeGreaterThan(0);
    } finally {
      await allocator.close();
    }
  });
});
