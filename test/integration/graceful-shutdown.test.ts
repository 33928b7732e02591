import { putSequence, spawnTicketd, startPrivatePair } from '../support/ticketd.js';

describe('graceful shutdown on SIGTERM', () => {
  it('stops accepting, lets the request in flight finish, closes the pools and exits 0', async () => {
    const pair = await startPrivatePair();
    const ticketd = await spawnTicketd(pair.backendsUrl);
    try {
      expect(await putSequence(ticketd.url, 'in_flight', { blockSize: 10 })).toBe(201);
      // Both backends hang, so the first request for the sequence waits on MySQL.
      pair.a.signal('SIGSTOP');
      pair.b.signal('SIGSTOP');
      const inFlight = fetch(`${ticketd.url}/v1/sequences/in_flight/next`).then(async (r) => ({
        status: r.status,
        body: await r.text(),
        connection: r.headers.get('connection'),
      }));
      await new Promise((r) => setTimeout(r, 200));
      const exit = ticketd.stop('SIGTERM');
      await new Promise((r) => setTimeout(r, 200));
      // No new connections once shutting down.
      await expect(fetch(`${ticketd.url}/healthz`)).rejects.toThrow();
      // The request in flight still gets a whole answer: here a 503 problem, since MySQL never answered.
      const answer = await inFlight;
      expect(answer.status).toBe(503);
      expect(answer.body).toContain('TICKETD_BACKENDS_UNAVAILABLE');
      // It closes its connection: the client does not send another request on it to be reset.
      expect(answer.connection).toBe('close');
      const started = Date.now();
      expect(await exit).toBe(0);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(ticketd.logs.some((l) => l.includes('"msg":"shutting down"'))).toBe(true);
    } finally {
      pair.a.signal('SIGCONT');
      pair.b.signal('SIGCONT');
      await ticketd.stop('SIGKILL');
      await pair.dispose();
    }
  });
});
