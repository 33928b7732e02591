import { sharedBackends, spawnTicketd } from '../support/ticketd.js';

describe('ticketd serve --workers 2', () => {
  it('serves from two processes with no duplicate, aggregates /metrics, and stops with exit 0 on SIGTERM', async () => {
    const ticketd = await spawnTicketd(sharedBackends(), { TICKETD_WORKERS: '2' });
    try {
      // Both workers log their start; cluster shares one port between them.
      for (let i = 0; i < 100 && ticketd.logs.filter((l) => l.includes('"msg":"ticketd listening"')).length < 2; i++)
        await new Promise((r) => setTimeout(r, 100));
      const pids = new Set(
        ticketd.logs
          .filter((l) => l.includes('"msg":"ticketd listening"'))
          .map((l) => (JSON.parse(l) as { pid: number }).pid),
      );
      expect(pids.size).toBe(2);

      const seen = new Set<string>();
      let total = 0;
      for (let round = 0; round < 20; round++) {
        const batch = await Promise.all(
          Array.from({ length: 50 }, async () => {
            const res = await fetch(`${ticketd.url}/v1/sequences/default/next`);
            expect(res.status).toBe(200);
            return ((await res.json()) as { id: string }).id;
          }),
        );
        for (const id of batch) seen.add(id);
        total += batch.length;
      }
      expect(seen.size).toBe(total);

      // Whichever worker answers, /metrics covers both: the sum is every ID issued above.
      const text = await (await fetch(`${ticketd.url}/metrics`)).text();
      const issued = text.split('\n').find((l) => l.startsWith('ticketd_ids_issued_total{sequence="default"}'));
      expect(Number(issued?.split(' ')[1])).toBe(total);
    } finally {
      const started = Date.now();
      expect(await ticketd.stop('SIGTERM')).toBe(0);
      expect(Date.now() - started).toBeLessThan(10_000);
    }
  });
});
