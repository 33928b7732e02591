import { IdPermutation } from 'ticketd-client';
import { Allocator } from '../../src/allocator/allocator.js';
import { parseSequenceSettings, withKey } from '../../src/core/sequence.js';
import { BackendsUnavailableError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/logger.js';
import { ENCODED_AHEAD, ENCODED_IN_BACKGROUND, OpaqueIds, type QuotedRun } from '../../src/service/opaque-ids.js';
import { TicketService } from '../../src/service/ticket-service.js';
import { fakeServers } from '../support/fake-backend.js';
import { quoteIds, type QuotedIds } from '../../src/util/decimal.js';

const OPAQUE = parseSequenceSettings('secret', { blockSize: 100, ids: 'opaque' });

function serviceOver(fakes: ReturnType<typeof fakeServers>): TicketService {
  const allocator = new Allocator({ backends: fakes.addresses, connect: fakes.connect, logger: silentLogger });
  return new TicketService({ allocator, logger: silentLogger });
}

function keyHex(fakes: ReturnType<typeof fakeServers>, index: number): string | undefined {
  const key = fakes.servers[index]!.sequences.get('secret')?.key;
  return key === undefined ? undefined : Buffer.from(key).toString('hex');
}

describe('the key of an opaque sequence', () => {
  test('is one key on every backend even when several processes create the sequence at once', async () => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const fakes = fakeServers(3);
      fakes.servers.forEach((s, i) => {
        s.identity = `identity-${(i * 7 + attempt) % 3}`;
        // Creators reach the backends in different orders, as over a real network.
        s.createDelayMs = () => Math.random() * 4;
      });
      const services = [serviceOver(fakes), serviceOver(fakes), serviceOver(fakes)];
      const created = await Promise.all(services.map((s) => s.createSequence(OPAQUE)));
      // Each may have created it on some backend; none was refused, and none wrote a key of its own.
      expect(created).toContain(true);
      expect(keyHex(fakes, 0)).toMatch(/^[0-9a-f]{64}$/);
      expect(keyHex(fakes, 1)).toBe(keyHex(fakes, 0));
      expect(keyHex(fakes, 2)).toBe(keyHex(fakes, 0));
      await Promise.all(services.map((s) => s.close()));
    }
  });

  test('is made only when every backend has answered, and a repeat keeps the key a backend already holds', async () => {
    const fakes = fakeServers(2);
    fakes.servers[1]!.down = new Error('connect ECONNREFUSED');
    const service = serviceOver(fakes);
    await expect(service.createSequence(OPAQUE)).rejects.toThrow(BackendsUnavailableError);
    expect(fakes.servers[0]!.sequences.has('secret')).toBe(false);

    // An earlier try that reached only one backend: a repeat completes it with that backend's key.
    const held = new Uint8Array(32).fill(9);
    fakes.servers[0]!.sequences.set('secret', withKey(OPAQUE, held, 'feistel-aes256-v1'));
    fakes.servers[1]!.down = undefined;
    expect(await service.createSequence(OPAQUE)).toBe(true);
    expect(keyHex(fakes, 1)).toBe(Buffer.from(held).toString('hex'));
    // The scheme travels with the key: a sequence begun by ticketd 0.4 stays on its scheme.
    expect(fakes.servers[1]!.sequences.get('secret')?.scheme).toBe('feistel-aes256-v1');
    await service.close();
  });

  test('is never in the settings a caller can print', async () => {
    const fakes = fakeServers(2);
    const service = serviceOver(fakes);
    await service.createSequence(OPAQUE);
    const settings = await service.settings('secret');
    expect(settings.key).toHaveLength(32);
    expect(Object.keys(settings)).toEqual(['name', 'blockSize', 'startAfter', 'maxId', 'ids', 'scheme']);
    // A new sequence gets the newest scheme.
    expect(settings.scheme).toBe('feistel-aes256-v2');
    await service.close();
  });
});

describe('an opaque sequence that no backend can serve', () => {
  test('answers a 503 that names no ticket (an ordered one names them, for its operators)', async () => {
    const fakes = fakeServers(2);
    const allocator = new Allocator({
      backends: fakes.addresses,
      connect: fakes.connect,
      logger: silentLogger,
      regressionPolicy: 'quarantine',
    });
    const service = new TicketService({ allocator, logger: silentLogger });
    const plain = parseSequenceSettings('plain', { blockSize: 100 });
    for (const settings of [OPAQUE, plain]) {
      await service.createSequence(settings);
      for (let i = 0; i < 4; i++) await service.leaseBlock(settings.name);
    }
    // Both counters went back (restored backups): each backend is quarantined for both sequences.
    for (const server of fakes.servers) for (const name of ['secret', 'plain']) server.regress(name, 1n);
    const orderedError = (await service.leaseBlock('plain').catch((e: unknown) => e)) as Error;
    expect(orderedError).toBeInstanceOf(BackendsUnavailableError);
    expect(orderedError.message).toMatch(/at or below ticket \d+/);
    const opaqueError = (await service.leaseBlock('secret').catch((e: unknown) => e)) as Error;
    expect(opaqueError).toBeInstanceOf(BackendsUnavailableError);
    expect(opaqueError.message).toBe(
      "no backend issued a ticket for sequence secret; the admin's GET /v1/sequences/secret says why",
    );
    expect(service.backendsFor('secret').every((b) => /ticket \d+/.test(b.quarantined ?? ''))).toBe(true);
    await service.close();
  });
});

describe('opaque IDs encoded ahead', () => {
  const permutation = new IdPermutation(
    new Uint8Array(32).fill(3),
    { startAfter: 0n, maxId: (1n << 64n) - 1n },
    'feistel-aes256-v2',
  );

  /** A cache of `total` consecutive ordered IDs from 1; `taken()` says how many it gave out. */
  function cacheOf(total: bigint): {
    take: (count: number) => { first: bigint; last: bigint }[] | undefined;
    taken: () => number;
  } {
    let next = 1n;
    return {
      take: (count) => {
        if (next - 1n + BigInt(count) > total) return undefined;
        const range = { first: next, last: next + BigInt(count) - 1n };
        next += BigInt(count);
        return [range];
      },
      taken: () => Number(next - 1n),
    };
  }

  /** The IDs as numbers: written ones (JSON strings, each with a comma) read back. */
  function valuesOf(ids: QuotedRun | BigUint64Array): bigint[] {
    if (ids instanceof BigUint64Array) return [...ids];
    const text = Buffer.concat(ids.parts).toString('latin1');
    const values = (JSON.parse(`[${text.slice(0, -1)}]`) as string[]).map(BigInt);
    expect(values).toHaveLength(ids.count);
    return values;
  }

  /** Records the ordered ID behind each of `ids`; throws on one handed out before. Returns how many. */
  function recordOnce(seen: Set<bigint>, given: QuotedRun | BigUint64Array): number {
    const ids = valuesOf(given);
    for (const id of ids) {
      const ordered = permutation.decode(id);
      if (seen.has(ordered)) throw new Error(`ordered ID ${ordered} handed out twice`);
      seen.add(ordered);
    }
    return ids.length;
  }

  test('hand out every ordered ID once, through P, whatever the request sizes, and count what is left as cached', () => {
    const cache = cacheOf(50_000n);
    const opaque = new OpaqueIds(permutation, cache.take);
    const seen = new Set<bigint>();
    const sizes = [1, 7, 1024, 1025, 3, 5000, 1];
    let handed = 0;
    for (let round = 0; round < 200; round++) {
      const ids = opaque.tryTake(sizes[round % sizes.length]!);
      if (ids === undefined) break;
      handed += recordOnce(seen, ids);
      expect(opaque.ahead).toBeLessThanOrEqual(ENCODED_AHEAD + 1024);
      // Taken from the "cache" = handed out + encoded ahead: nothing lost or counted twice.
      expect(cache.taken()).toBe(handed + opaque.ahead);
    }
    expect(handed).toBeGreaterThan(40_000);
    // Near the end the cache cannot fill the buffer, and requests are still served from what is left.
    expect([...seen].every((x) => x >= 1n && x <= BigInt(cache.taken()))).toBe(true);
  });

  test('with an encoder elsewhere, as with its answers late, failing, or never: every ordered ID once, and the accounting holds', async () => {
    const cache = cacheOf(400_000n);
    let calls = 0;
    const lost: bigint[] = [];
    // Answers after a few requests, several batches at once; the 4th batch fails (its IDs are a gap), after which none is asked for.
    const elsewhere = async (ranges: readonly { first: bigint; last: bigint }[]): Promise<QuotedIds> => {
      const call = ++calls;
      await new Promise((r) => setTimeout(r, 1));
      if (call === 4) {
        lost.push(ranges[0]!.first);
        throw new Error('the thread died');
      }
      const out = new BigUint64Array(ranges.reduce((n, r) => n + Number(r.last - r.first + 1n), 0));
      let at = 0;
      for (const r of ranges) {
        permutation.encodeRun(r.first, Number(r.last - r.first + 1n), out, at);
        at += Number(r.last - r.first + 1n);
      }
      return quoteIds(out);
    };
    const opaque = new OpaqueIds(permutation, cache.take, elsewhere);
    const seen = new Set<bigint>();
    let handed = 0;
    for (let round = 0; round < 600; round++) {
      const ids = opaque.tryTake([1000, 1, 333, 1024][round % 4]!);
      if (ids === undefined) break;
      handed += recordOnce(seen, ids);
      const lostIds = lost.length * ENCODED_IN_BACKGROUND;
      expect(cache.taken()).toBe(handed + opaque.ahead + lostIds);
      if (round % 3 === 0) await new Promise((r) => setTimeout(r, 2));
    }
    expect(calls).toBeGreaterThanOrEqual(4);
    expect(lost).toHaveLength(1);
    expect(handed).toBeGreaterThan(300_000);
  });
});
