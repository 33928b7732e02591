/** In-process ID generation, all in one process: what handing out one ID costs. */
import { randomUUID } from 'node:crypto';
import { Snowflake } from '@sapphire/snowflake';
import { monotonicFactory } from 'ulid';
import { v7 } from 'uuid';
import { RangeCache } from '../src/cache/range-cache.js';
import { createTicketClient, type TicketClient } from 'ticketd-client';

/** IDs per second of one generator. */
export interface InProcessResult {
  readonly name: string;
  readonly idsPerSecond: number;
}

const RUN_MS = 300;
const ROUNDS = 3;

/** Best IDs/s over ROUNDS runs of RUN_MS, calling `chunk` (which hands out 1,000 IDs) repeatedly. */
export async function timeChunks(name: string, chunk: () => Promise<void> | void): Promise<InProcessResult> {
  let best = 0;
  for (let round = 0; round < ROUNDS; round++) {
    let n = 0;
    const start = process.hrtime.bigint();
    const end = start + BigInt(RUN_MS) * 1_000_000n;
    let now = start;
    while (now < end) {
      await chunk();
      n += 1000;
      now = process.hrtime.bigint();
    }
    best = Math.max(best, n / (Number(now - start) / 1e9));
  }
  return { name, idsPerSecond: Math.round(best) };
}

/** A synchronous generator, 1,000 calls per chunk. */
export function measure(name: string, next: () => unknown): Promise<InProcessResult> {
  let sink: unknown;
  return timeChunks(name, () => {
    for (let i = 0; i < 1000; i++) sink = next();
    if (sink === undefined) throw new Error(`${name} produced nothing`);
  });
}

/**
 * nextSync() in runs of 1,000, yielding between runs so background leases complete; when no block
 * is buffered it waits on next() instead. Every call counted yields a real ID.
 */
function measureSync(name: string, client: TicketClient): Promise<InProcessResult> {
  return timeChunks(name, async () => {
    for (let i = 0; i < 1000; i++) {
      try {
        client.nextSync();
      } catch {
        await client.next();
      }
    }
    await new Promise((r) => setImmediate(r));
  });
}

/** The client SDK against a running ticketd: next() and nextSync(), leases included. */
export async function runSdk(
  ticketdUrl: string,
  sequence: string,
  blocks: string,
  token?: string,
): Promise<InProcessResult[]> {
  const client = createTicketClient({ urls: [ticketdUrl], sequence, ...(token !== undefined && { token }) });
  await client.next();
  const kind = (await client.codec()).ids === 'opaque' ? 'opaque IDs, ' : '';
  const results = [
    await timeChunks(`SDK next() (${kind}leases blocks of ${blocks})`, async () => {
      for (let i = 0; i < 1000; i++) await client.next();
    }),
    await measureSync(`SDK nextSync() (${kind}leases blocks of ${blocks})`, client),
  ];
  await client.close();
  for (const r of results) console.log(`  ${r.name}: ${r.idsPerSecond.toLocaleString('en')} IDs/s`);
  return results;
}

/** The ceiling of any API awaited once per ID: an async function returning a cached bigint. */
export function awaitCeiling(
  name = 'await of an async function returning counter++ (ceiling of next())',
): Promise<InProcessResult> {
  let counter = 0n;
  const next = (): Promise<bigint> => Promise.resolve(counter++);
  return timeChunks(name, async () => {
    for (let i = 0; i < 1000; i++) await next();
  });
}

/** Runs every generator; the ticketd RangeCache entry is the server's cache hot path. */
export async function runInProcess(): Promise<InProcessResult[]> {
  const blockSize = 1_000_000_000n;
  let ticket = 0n;
  const cache = new RangeCache({
    sequence: 'bench',
    blockSize,
    refill: () => {
      ticket++;
      return Promise.resolve([{ first: ticket * blockSize, last: ticket * blockSize + blockSize - 1n }]);
    },
    clock: Date.now,
    onBackgroundError: () => undefined,
  });
  await cache.take(1);
  const snowflake = new Snowflake(new Date('2026-01-01T00:00:00Z'));
  const ulid = monotonicFactory();
  const results = [
    await measure('ticketd RangeCache.tryTake(1) (cached block)', () => cache.tryTake(1)![0]!.first),
    await measure('@sapphire/snowflake generate()', () => snowflake.generate()),
    await awaitCeiling(),
    await measure('crypto.randomUUID()', () => randomUUID()),
    await measure('ulid (monotonic)', () => ulid()),
    await measure('uuid v7', () => v7()),
  ];
  for (const r of results) console.log(`  ${r.name}: ${r.idsPerSecond.toLocaleString('en')} IDs/s`);
  return results;
}
