import { IdPermutation } from 'ticketd-client';
import { Allocator } from '../../src/allocator/allocator.js';
import { parseSequenceSettings, withKey } from '../../src/core/sequence.js';
import { BackendsUnavailableError } from '../../src/errors.js';
import { silentLogger } from '../../src/logger.js';
import { OpaqueIds, ENCODED_AHEAD } from '../../src/service/opaque-ids.js';
import { TicketService } from '../../src/service/ticket-service.js';
import { fakeServers } from '../support/fake-backend.js';

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

describe('opaque IDs encoded ahead', () => {
  const permutation = new IdPermutation(new Uint8Array(32).fill(3), { startAfter: 0n, maxId: (1n << 64n) - 1n }, 'feistel-aes256-v2');

  test('hand out every ordered ID once, through P, whatever the request sizes, and count what is left as cached', () => {
    let next = 1n;
    let left = 50_000n;
    const take = (count: number): { first: bigint; last: bigint }[] | undefined => {
      if (BigInt(count) > left) return undefined;
      const range = { first: next, last: next + BigInt(count) - 1n };
      next += BigInt(count);
      left -= BigInt(count);
      return [range];
    };
    const opaque = new OpaqueIds(permutation, take);
    const seen = new Set<bigint>();
    const sizes = [1, 7, 1024, 1025, 3, 5000, 1];
    let handed = 0;
    for (let round = 0; round < 200; round++) {
      const ids = opaque.tryTake(sizes[round % sizes.length]!);
      if (ids === undefined) break;
      for (const id of ids) {
        const ordered = permutation.decode(id);
        if (seen.has(ordered)) throw new Error(`ordered ID ${ordered} handed out twice`);
        seen.add(ordered);
      }
      handed += ids.length;
      expect(opaque.ahead).toBeLessThanOrEqual(ENCODED_AHEAD + 1024);
      // Taken from the "cache" = handed out + encoded ahead: nothing lost or counted twice.
      expect(Number(next - 1n)).toBe(handed + opaque.ahead);
    }
    expect(handed).toBeGreaterThan(40_000);
    // Near the end the cache cannot fill the buffer, and requests are still served from what is left.
    expect([...seen].every((x) => x >= 1n && x < next)).toBe(true);
  });
});
