/**
 * The serving account's advance (backend/mysql/ticket-sql.ts: an INSERT of an explicit id and its
 * DELETE in one transaction, no ALTER) on each engine, with the shipped offsets and increment (1 and
 * 2 of 16): it moves the counter to the backend's first ticket at or above the target, never lowers
 * it, is a no-op at the ticket row's own id, and survives a kill -9 (MySQL 8+ and MariaDB persist the
 * counter).
 */
import { Backend } from '../../src/backend/mysql/backend.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { LocalPair } from '../../src/launcher/local-pair.js';
import { describeEachEngine } from '../support/engines.js';
import { putSequence, sqlOn, startInProcess, startPrivatePair } from '../support/ticketd.js';

const SEQUENCE = 'advanced';
const INCREMENT = 16n;

/** The backend's one ticket, fetched. */
async function oneTicket(backend: Backend): Promise<bigint> {
  const batch = await backend.fetchTickets(SEQUENCE, 1);
  if (batch.error !== undefined) throw batch.error instanceof Error ? batch.error : new Error('fetchTickets failed');
  return batch.tickets[0]!;
}

describeEachEngine('a counter advanced with INSERT and DELETE alone', (engine) => {
  let pair: LocalPair & { dispose(): Promise<void> };
  const opened: Backend[] = [];
  const serving = (index: number): Backend => {
    const url = new URL(pair.backendsUrl.split(',')[index]!);
    url.username = 'tk_advance';
    url.password = 'advance-pass';
    const backend = new Backend(loadConfig({ backends: url.toString() }).backends[0]!, () => undefined);
    opened.push(backend);
    return backend;
  };

  beforeAll(async () => {
    pair = await startPrivatePair(engine.binary);
    for (const url of pair.backendsUrl.split(','))
      await sqlOn(
        url,
        "CREATE USER IF NOT EXISTS 'tk_advance'@'%' IDENTIFIED BY 'advance-pass'",
        "GRANT SELECT, INSERT, DELETE ON ticketd.* TO 'tk_advance'@'%'",
      );
    const admin = await startInProcess(pair.backendsUrl);
    expect(await putSequence(admin.url, SEQUENCE, { blockSize: 1 })).toBe(201);
    await admin.close();
  }, 120_000);
  afterAll(async () => {
    for (const b of opened) await b.close();
    await pair.dispose();
  });

  for (const [index, offset] of [
    [0, 1n],
    [1, 2n],
  ] as const) {
    it(`offset ${offset} of 16: forward to its first ticket at or above the target, never back, a no-op at its own row`, async () => {
      const backend = serving(index);
      const first = await oneTicket(backend);
      expect(first % INCREMENT).toBe(offset % INCREMENT);
      const target = first + 1000n;
      await backend.advanceCounter(SEQUENCE, target);
      const next = await oneTicket(backend);
      // The first ticket of its class at or above the target: parity kept, nothing skipped beyond it.
      expect(next).toBeGreaterThanOrEqual(target);
      expect(next - target).toBeLessThan(INCREMENT);
      expect(next % INCREMENT).toBe(offset % INCREMENT);
      // Lower: ignored.
      await backend.advanceCounter(SEQUENCE, 5n);
      expect(await oneTicket(backend)).toBe(next + INCREMENT);
      // The ticket row's own id (the counter is past it): nothing to do, and no error.
      const last = await backend.lastTicket(SEQUENCE);
      await backend.advanceCounter(SEQUENCE, last + 1n);
      expect(await oneTicket(backend)).toBe(last + INCREMENT);
      // The table holds its one ticket row, no row of the advance.
      expect(await backend.lastTicket(SEQUENCE)).toBe(last + INCREMENT);
    });
  }

  it('the advance survives a kill -9 of the server', async () => {
    const backend = serving(0);
    const before = await oneTicket(backend);
    const target = before + 50_000n;
    await backend.advanceCounter(SEQUENCE, target);
    pair.a.signal('SIGKILL');
    await pair.a.exited();
    expect(pair.a.pid).toBeUndefined();
    await pair.a.restart();
    const after = await oneTicket(serving(0));
    console.log(
      `advance without ALTER [${engine.name}]: ticket ${before}, advanced to ≥ ${target}, after kill -9 the next is ${after}`,
    );
    expect(after).toBeGreaterThanOrEqual(target);
    expect(after % INCREMENT).toBe(1n);
  }, 60_000);
});
