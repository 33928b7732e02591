/**
 * A strict sequence's bound on a real server, on every engine: raised exactly, never lowered, past
 * a new digit and past 2^53. Measured before the fix: GREATEST(bound, '10001000') kept 9990000 on
 * MySQL 9.7 (compared as strings) and wrote 9007199254740992 for 9007199254740993 on MariaDB 10.11
 * (compared as doubles); either lets a new leader start below IDs already issued.
 */
import { Backend } from '../../src/backend/mysql/backend.js';
import { DEFAULT_BACKEND_OPTIONS } from '../../src/backend/backend-options.js';
import { loadConfig } from '../../src/config/load-config.js';
import { describeEachEngine } from '../support/engines.js';
import { startPrivatePair } from '../support/ticketd.js';

describeEachEngine('a strict bound on the server', (engine) => {
  let pair: Awaited<ReturnType<typeof startPrivatePair>>;
  let backend: Backend;

  beforeAll(async () => {
    pair = await startPrivatePair(engine.binary);
    backend = new Backend(
      loadConfig({ backends: pair.backendsUrl }).backends[0]!,
      () => undefined,
      DEFAULT_BACKEND_OPTIONS,
    );
  }, 120_000);
  afterAll(async () => {
    await backend?.close();
    await pair?.dispose();
  });

  it('is raised exactly, past a new digit and past 2^53, and never lowered; only the leader of the epoch writes it', async () => {
    const take = await backend.strict.take('bounds', 1n, 'leader-1', 'http://127.0.0.1:1', 0n);
    expect(take.won).toBe(true);
    const bound = async (): Promise<bigint | undefined> => (await backend.strict.read('bounds'))?.bound;
    for (const raised of [9_990_000n, 10_001_000n, 9_007_199_254_740_993n, 18_446_744_073_709_551_000n]) {
      expect(await backend.strict.extend('bounds', 1n, 'leader-1', raised)).toBe(true);
      expect(await bound()).toBe(raised);
    }
    expect(await backend.strict.extend('bounds', 1n, 'leader-1', 5n)).toBe(true);
    expect(await bound()).toBe(18_446_744_073_709_551_000n);
    expect(await backend.strict.extend('bounds', 2n, 'leader-2', 18_446_744_073_709_551_615n)).toBe(false);
    await backend.strict.resign('bounds', 1n, 'leader-1');
    expect(await backend.strict.extend('bounds', 1n, 'leader-1', 18_446_744_073_709_551_615n)).toBe(false);
    expect(await bound()).toBe(18_446_744_073_709_551_000n);
  });
});
