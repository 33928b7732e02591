/**
 * The SDK's Snowflake generator beside @sapphire/snowflake and the await ceiling, in one process
 * against the running ticketd; and what a lease renewal costs over HTTP.
 */
import { Snowflake as Sapphire } from '@sapphire/snowflake';
import { createSnowflake, type Snowflake } from 'ticketd-client';
import type { StepCost } from './claim-cost.js';
import type { InProcessResult } from './in-process.js';
import { awaitCeiling, measure, timeChunks } from './in-process.js';

/** What the Snowflake part of the bench measured. */
export interface SnowflakeResults {
  readonly generators: InProcessResult[];
  /** IDs that @sapphire/snowflake gave twice in a tight loop of SAPPHIRE_CHECKED (it wraps its 12-bit increment within a millisecond). */
  readonly sapphireRepeats: number;
  readonly sapphireChecked: number;
  readonly renewal: StepCost;
}

const SAPPHIRE_CHECKED = 1_000_000;
const RENEWALS = 300;
/** A layout with 16 bits of sequence: 65,536 IDs per millisecond, so the clock read is what limits it. */
const WIDE = { timeBits: 41, workerBits: 6, sequenceBits: 16 } as const;

/** Creates two pools, measures the generators and the renewals, and closes what it opened. */
export async function runSnowflake(ticketdUrl: string, adminToken: string): Promise<SnowflakeResults> {
  for (const [pool, workerBits] of [
    ['bench_default', 10],
    ['bench_wide', 6],
  ] as const) {
    const res = await fetch(`${ticketdUrl}/v1/worker-pools/${pool}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ workerBits }),
    });
    if (res.status !== 200 && res.status !== 201)
      throw new Error(`PUT pool ${pool}: ${res.status} ${await res.text()}`);
  }
  const standard = createSnowflake({ urls: [ticketdUrl], pool: 'bench_default' });
  const wide = createSnowflake({ urls: [ticketdUrl], pool: 'bench_wide', layout: WIDE });
  await Promise.all([standard.ready(), wide.ready()]);
  const sapphire = new Sapphire(new Date('2026-01-01T00:00:00Z'));
  const generators = [
    await measure('@sapphire/snowflake generate() (beside the SDK Snowflake)', () => sapphire.generate()),
    await measureSync('SDK Snowflake nextSync() (layout 41/10/12: at most 4,096 IDs per ms)', standard),
    await measureSync('SDK Snowflake nextSync() (layout 41/6/16)', wide),
    await awaitCeiling('await of an async function returning counter++ (beside the SDK Snowflake)'),
    await timeChunks('SDK Snowflake next() (layout 41/6/16)', async () => {
      for (let i = 0; i < 1000; i++) await wide.next();
    }),
    await timeChunks('SDK Snowflake next() (layout 41/10/12)', async () => {
      for (let i = 0; i < 1000; i++) await standard.next();
    }),
  ];
  for (const r of generators) console.log(`  ${r.name}: ${r.idsPerSecond.toLocaleString('en')} IDs/s`);
  const seen = new Set<bigint>();
  for (let i = 0; i < SAPPHIRE_CHECKED; i++) seen.add(sapphire.generate());
  const sapphireRepeats = SAPPHIRE_CHECKED - seen.size;
  console.log(
    `  @sapphire/snowflake: ${sapphireRepeats} of ${SAPPHIRE_CHECKED.toLocaleString('en')} IDs repeated in a tight loop`,
  );
  await Promise.all([standard.close(), wide.close()]);
  const renewal = await measureRenewal(ticketdUrl);
  console.log(`  lease renewal over HTTP: median ${renewal.medianMs} ms, p99 ${renewal.p99Ms} ms`);
  return { generators, sapphireRepeats, sapphireChecked: SAPPHIRE_CHECKED, renewal };
}

/** nextSync() in runs of 1,000, yielding between runs so that renewals run. */
function measureSync(name: string, generator: Snowflake): Promise<InProcessResult> {
  return timeChunks(name, async () => {
    for (let i = 0; i < 1000; i++) generator.nextSync();
    await new Promise((r) => setImmediate(r));
  });
}

/** RENEWALS renewals of one lease, one after another, as a holder sends them: what the owner's transaction and the claims cost. */
async function measureRenewal(ticketdUrl: string): Promise<StepCost> {
  const post = async (path: string, body: object): Promise<Record<string, unknown>> => {
    const res = await fetch(`${ticketdUrl}/v1/worker-pools/bench_default/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 200) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  const lease = await post('leases', { holder: 'bench' });
  const times: number[] = [];
  for (let i = 0; i < RENEWALS; i++) {
    const start = performance.now();
    await post(`leases/${String(lease.workerId)}/renew`, { epoch: lease.epoch });
    times.push(performance.now() - start);
  }
  await post(`leases/${String(lease.workerId)}/release`, { epoch: lease.epoch, lastUsedMs: 0 });
  times.sort((a, b) => a - b);
  const at = (q: number): number =>
    Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))]! * 100) / 100;
  return { name: `lease renewal over HTTP (${RENEWALS} in a row)`, medianMs: at(0.5), p99Ms: at(0.99) };
}
