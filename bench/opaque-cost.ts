/**
 * What opaque IDs cost: the permutation per ID in-process, and the seed question of the issue,
 * how much slower InnoDB takes rows keyed by opaque IDs than by ordered ones (same run, same server).
 */
import { randomBytes } from 'node:crypto';
import mysql, { type RowDataPacket } from 'mysql2/promise';
import { IdPermutation, KEY_BYTES, PERMUTATION_SCHEME } from 'ticketd-client';
import { quoteIds } from '../src/util/decimal.js';

/** One measured way of doing something, with its unit. */
export interface CostResult {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
}

const ROWS_PER_INSERT = 1000;
const UINT64_MAX = (1n << 64n) - 1n;
const RUN_MS = 300;

/**
 * Best nanoseconds of CPU per ID over three runs of `run(n)`, which handles n IDs: CPU time (this
 * process's, user + system), not elapsed time, which on shared cores counts the neighbours' turns.
 */
function nsPerId(n: number, run: () => void): number {
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    let done = 0;
    const start = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    while (process.hrtime.bigint() - start < BigInt(RUN_MS) * 1_000_000n) {
      run();
      done += n;
    }
    const used = process.cpuUsage(cpu);
    best = Math.min(best, ((used.user + used.system) * 1000) / done);
  }
  return Math.round(best * 10) / 10;
}

/** P per ID in-process: in batches (as the server and SDK use it) and one at a time. */
export function measurePermutation(): CostResult[] {
  const wide = new IdPermutation(randomBytes(KEY_BYTES), { startAfter: 0n, maxId: UINT64_MAX }, PERMUTATION_SCHEME);
  const migrated = new IdPermutation(
    randomBytes(KEY_BYTES),
    { startAfter: 1_500_000n, maxId: 2147483647n },
    PERMUTATION_SCHEME,
  );
  const out = new BigUint64Array(1000);
  let next = 1n;
  let at = 1_500_001n;
  const results: CostResult[] = [
    {
      name: 'ordered: 1,000 consecutive IDs into an array (the baseline)',
      value: nsPerId(1000, () => {
        for (let k = 0; k < 1000; k++) out[k] = next++;
      }),
      unit: 'ns/ID',
    },
    {
      name: 'P, batches of 1,000, 64-bit domain',
      value: nsPerId(1000, () => {
        wide.encodeRun(next, 1000, out, 0);
        next += 1000n;
      }),
      unit: 'ns/ID',
    },
    {
      name: "writing P's outputs as JSON strings (the encoder thread's quoteIds), batches of 1,000, 64-bit domain",
      value: nsPerId(1000, () => void quoteIds(out)),
      unit: 'ns/ID',
    },
    {
      name: 'P, batches of 1,000, migrated 32-bit domain (1,500,000, 2^31−1]',
      value: nsPerId(1000, () => {
        migrated.encodeRun(at, 1000, out, 0);
        at += 1000n;
      }),
      unit: 'ns/ID',
    },
    {
      name: 'P, one ID per call (encode), 64-bit domain',
      value: nsPerId(1, () => void wide.encode(next++)),
      unit: 'ns/ID',
    },
    {
      name: 'P⁻¹, one ID per call (decode), 64-bit domain',
      value: nsPerId(1, () => void wide.decode(next++)),
      unit: 'ns/ID',
    },
  ];
  for (const r of results) console.log(`  ${r.name}: ${r.value} ${r.unit}`);
  return results;
}

/**
 * `rows` rows into an InnoDB table keyed by BIGINT UNSIGNED, ordered IDs then opaque ones, in
 * multi-row INSERTs of ROWS_PER_INSERT, autocommit, on a backend of the bench pair.
 */
export async function measureInnodbInserts(serverUrl: string, rows: number): Promise<CostResult[]> {
  const conn = await mysql.createConnection(serverUrl);
  const permutation = new IdPermutation(
    randomBytes(KEY_BYTES),
    { startAfter: 0n, maxId: UINT64_MAX },
    PERMUTATION_SCHEME,
  );
  const results: CostResult[] = [];
  try {
    const [pool] = await conn.query<RowDataPacket[]>('SELECT @@innodb_buffer_pool_size AS size');
    const poolMiB = Math.round(Number(pool[0]?.size) / 2 ** 20);
    for (const mode of ['ordered', 'opaque'] as const) {
      await conn.query('DROP TABLE IF EXISTS bench_orders');
      await conn.query(
        'CREATE TABLE bench_orders (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, customer INT UNSIGNED NOT NULL, note VARCHAR(64) NOT NULL) ENGINE=InnoDB',
      );
      const ids = new BigUint64Array(ROWS_PER_INSERT);
      const start = process.hrtime.bigint();
      for (let first = 1; first <= rows; first += ROWS_PER_INSERT) {
        if (mode === 'opaque') permutation.encodeRun(BigInt(first), ROWS_PER_INSERT, ids, 0);
        else for (let k = 0; k < ROWS_PER_INSERT; k++) ids[k] = BigInt(first + k);
        const values = Array.from(
          ids,
          (id, k) => `(${id},${(first + k) % 100_000},'order note of about forty characters, here')`,
        ).join(',');
        await conn.query(`INSERT INTO bench_orders (id, customer, note) VALUES ${values}`);
      }
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      await conn.query('ANALYZE TABLE bench_orders');
      const [size] = await conn.query<RowDataPacket[]>(
        "SELECT DATA_LENGTH + INDEX_LENGTH AS bytes FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'bench_orders'",
      );
      const label = `${rows.toLocaleString('en')} rows, ${mode} keys`;
      results.push({
        name: `InnoDB insert rate, ${label} (buffer pool ${poolMiB} MiB)`,
        value: Math.round(rows / seconds),
        unit: 'rows/s',
      });
      results.push({
        name: `InnoDB table size after, ${label}`,
        value: Math.round(Number(size[0]?.bytes) / 2 ** 20),
        unit: 'MiB',
      });
    }
    await conn.query('DROP TABLE IF EXISTS bench_orders');
  } finally {
    await conn.end();
  }
  for (const r of results) console.log(`  ${r.name}: ${r.value.toLocaleString('en')} ${r.unit}`);
  return results;
}
