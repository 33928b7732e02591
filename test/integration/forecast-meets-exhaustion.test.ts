/**
 * The forecast of when a sequence runs out, against the moment it does, on every engine: two front
 * ends share a small sequence (blocks of 10, 250 tickets below maxId) under a paced load of 100 IDs
 * a second, 80 through one and 20 through the other, run until one answers TICKETD_SEQUENCE_EXHAUSTED. At ~40% of the
 * run, one front end's forecast (the fleet's rate, seen through the ticket numbers it fetched) is
 * read from GET /v1/sequences/{name}, /metrics and the status page; the time it said was left must
 * be within 20% of the time that was left; `sequences usage` says it too.
 */
import type { RunningTicketd } from '../../src/server.js';
import { describeEachEngine } from '../support/engines.js';
import { sleep } from '../support/id-ledger.js';
import { putSequence, runCliAsync, startInProcess, startPrivatePair } from '../support/ticketd.js';
import { putPool } from '../support/worker-pools.js';

const SEQUENCE = 'forecast';
/** The pair's stripes are 16 wide (sql/backend-*.cnf): 2 tickets in every 16, so 250 tickets of 10 IDs. */
const MAX_ID = 19_999;
/** Each tick asks the first front end for this many IDs, and the second for this many. */
const PER_TICK = [8, 2] as const;
const TICK_MS = 100;
/** 2,500 IDs at 100 a second: the run lasts about 25 s; the forecast is read at 10 s. */
const READ_AT_MS = 10_000;
/** The Snowflake holders' epoch the front ends are told: 100 days ago, so 35 time bits last 297.7 days more. */
const EPOCH_MS = Date.now() - 100 * 86_400_000;

interface Capacity {
  readonly secondsLeft: number | null;
  readonly idsPerSecond: number | null;
  readonly level: string;
}

async function capacityOf(url: string): Promise<Capacity> {
  const res = await fetch(`${url}/v1/sequences/${SEQUENCE}`);
  return ((await res.json()) as { capacity: Capacity }).capacity;
}

async function seriesValue(url: string, line: RegExp): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match = line.exec(text);
  return match === null ? undefined : Number(match[1]);
}

describeEachEngine('the forecast of a sequence running out', (engine) => {
  let pair: Awaited<ReturnType<typeof startPrivatePair>> | undefined;
  const fronts: RunningTicketd[] = [];

  beforeAll(async () => {
    pair = await startPrivatePair(engine.binary);
    for (let i = 0; i < 2; i++)
      fronts.push(
        await startInProcess(pair.backendsUrl, {
          runsOutWarningDays: '0.5',
          snowflakeEpoch: String(EPOCH_MS),
          usageFlushMs: '500',
          logLevel: 'silent',
        }),
      );
    expect(await putSequence(fronts[0]!.url, SEQUENCE, { blockSize: 10, maxId: String(MAX_ID) })).toBe(201);
  }, 120_000);
  afterAll(async () => {
    for (const f of fronts) await f.close();
    await pair?.dispose();
  });

  it('is within 20% of when it answers exhausted, under a steady load through two front ends', async () => {
    const started = Date.now();
    let exhaustedAt: number | undefined;
    let issued = 0;
    const ask = async (url: string, count: number): Promise<void> => {
      const res = await fetch(`${url}/v1/sequences/${SEQUENCE}/ids?count=${count}`, { method: 'POST' });
      const body = (await res.json()) as { ids?: string[]; code?: string };
      if (res.status === 200) issued += body.ids!.length;
      else if (body.code === 'TICKETD_SEQUENCE_EXHAUSTED') exhaustedAt ??= Date.now();
      else throw new Error(`POST ids: ${res.status} ${JSON.stringify(body)}`);
    };
    // Paced by the clock, not by the answers: a slow answer does not slow the load.
    const load = (async () => {
      for (let tick = 0; exhaustedAt === undefined && tick < 600; tick++) {
        await sleep(Math.max(0, started + tick * TICK_MS - Date.now()));
        void ask(fronts[0]!.url, PER_TICK[0]);
        void ask(fronts[1]!.url, PER_TICK[1]);
      }
    })();

    await sleep(READ_AT_MS);
    const readAt = Date.now();
    const forecast = await capacityOf(fronts[0]!.url);
    const other = await capacityOf(fronts[1]!.url);
    const metric = await seriesValue(
      fronts[0]!.url,
      new RegExp(`^ticketd_sequence_seconds_left\\{sequence="${SEQUENCE}"\\} (\\S+)$`, 'm'),
    );
    const page = await (await fetch(`${fronts[0]!.url}/`)).text();
    // `sequences usage` tells it too: the shortest forecast the running front ends wrote with their figures.
    const cli = await runCliAsync(['sequences', 'usage', SEQUENCE, '--json'], { TICKETD_BACKENDS: pair!.backendsUrl });
    const cliAt = Date.now();
    const [usage] = (JSON.parse(cli.stdout) as { sequences: { secondsLeft: number | null }[] }).sequences;
    await load;
    await sleep(500);

    expect(exhaustedAt).toBeDefined();
    const actual = (exhaustedAt! - readAt) / 1000;
    console.log(
      `${engine.name}: at ${((readAt - started) / 1000).toFixed(1)} s, ${forecast.idsPerSecond} IDs/s and ${forecast.secondsLeft} s left forecast; exhausted ${actual.toFixed(1)} s later (${issued} IDs issued); the other front end forecast ${other.idsPerSecond} IDs/s and ${other.secondsLeft} s`,
    );
    // In maxId's units: 8 per ID handed out, as the stripes leave 14 ticket numbers in 16 unused.
    expect(forecast.idsPerSecond).toBeGreaterThan(640);
    expect(forecast.idsPerSecond).toBeLessThan(960);
    expect(Math.abs(forecast.secondsLeft! - actual) / actual).toBeLessThan(0.2);
    const actualFromCli = (exhaustedAt! - cliAt) / 1000;
    console.log(
      `${engine.name}: sequences usage said ${usage?.secondsLeft} s left, ${actualFromCli.toFixed(1)} s before it ran out`,
    );
    expect(Math.abs(usage!.secondsLeft! - actualFromCli) / actualFromCli).toBeLessThan(0.25);
    // The gauge is the same figure (read a moment later), and the page says it to a person.
    expect(Math.abs(metric! - forecast.secondsLeft!)).toBeLessThan(2);
    expect(page).toMatch(/<td>1\d s<\/td>/);
    // Under TICKETD_RUNS_OUT_WARNING_DAYS (half a day here) its row is marked, as the alert would fire.
    expect(page).toContain(`<tr class="down"><td>${SEQUENCE}</td>`);
    // Every ID below maxId was issued but what the other front end still caches.
    expect(issued).toBeGreaterThan(2400);

    const after = await capacityOf(fronts[0]!.url);
    expect(after).toMatchObject({ level: 'exhausted', secondsLeft: 0 });
    expect(
      await seriesValue(
        fronts[0]!.url,
        new RegExp(`^ticketd_sequence_seconds_left\\{sequence="${SEQUENCE}"\\} (\\S+)$`, 'm'),
      ),
    ).toBe(0);
    expect(await seriesValue(fronts[0]!.url, /^ticketd_sequence_seconds_left_warning (\S+)$/m)).toBe(43_200);
    expect(await (await fetch(`${fronts[0]!.url}/`)).text()).toMatch(/<td>none<\/td>/);
  }, 90_000);

  it("tells when a 16-bit pool's 35-bit time field runs out, for the epoch the operator gave", async () => {
    const url = fronts[1]!.url;
    expect((await putPool(url, 'forecast_pool', { workerBits: 16 })).status).toBe(201);
    const pool = (await (await fetch(`${url}/v1/worker-pools/forecast_pool`)).json()) as {
      timeField: { timeBits: number; epoch: string; endsAt: string; secondsLeft: number };
    };
    expect(pool.timeField).toMatchObject({
      timeBits: 35,
      epoch: new Date(EPOCH_MS).toISOString(),
      endsAt: new Date(EPOCH_MS + 2 ** 35).toISOString(),
    });
    const left = (EPOCH_MS + 2 ** 35 - Date.now()) / 1000;
    expect(Math.abs(pool.timeField.secondsLeft - left)).toBeLessThan(60);
    const gauge = await seriesValue(
      url,
      /^ticketd_worker_pool_time_field_seconds_left\{pool="forecast_pool"\} (\S+)$/m,
    );
    expect(Math.abs(gauge! - left)).toBeLessThan(60);
    // Under a year: marked on the status page, as TicketdSnowflakeTimeFieldEnding would fire.
    expect(await (await fetch(`${url}/`)).text()).toMatch(
      /<tr class="down"><td>forecast_pool<\/td>.*<td>297 days, until /,
    );
  });
});
