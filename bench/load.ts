/** Load runs with autocannon, which also keeps every body, so every ID received is checked for uniqueness. */
import autocannon from 'autocannon';
import { assertUnique } from './unique.js';

/** What one load run measured. */
export interface HttpResult {
  readonly name: string;
  readonly requestsPerSecond: number;
  readonly idsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly maxMs: number;
  readonly failed: number;
  readonly ids: number;
  readonly unique: boolean | 'not checked';
}

/** One load run. */
export interface LoadOptions {
  readonly name: string;
  readonly url: string;
  readonly method?: 'GET' | 'POST';
  readonly idsPerResponse: number;
  readonly check: boolean;
  readonly seconds?: number;
  /** Runs beside the load (a fault, a restart); the run ends when both have. */
  readonly during?: () => Promise<void>;
}

/** A load function, as scenarios receive it. */
export type Load = (options: LoadOptions) => Promise<HttpResult>;

/** Durations and connections of every run of a bench. */
export interface LoadSettings {
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly connections: number;
}

/** The load function for these settings: a warm-up, then the measured run. */
export function createLoad(settings: LoadSettings): Load {
  return async (options) => {
    const base = { url: options.url, connections: settings.connections, method: options.method ?? 'GET' };
    await autocannon({ ...base, duration: settings.warmupSeconds });
    const bodies: Buffer[] = [];
    const run = autocannon({
      ...base,
      duration: options.seconds ?? settings.seconds,
      ...(options.check && { setupClient: (client) => client.on('body', (body: Buffer) => bodies.push(body)) }),
    });
    await options.during?.();
    const result = await run;
    const unique = options.check ? assertUnique(bodies, options.name) : 'not checked';
    const failed = result.non2xx + result.errors + result.timeouts;
    return {
      name: options.name,
      requestsPerSecond: result.requests.average,
      idsPerSecond: result.requests.average * options.idsPerResponse,
      p50: result.latency.p50,
      p99: result.latency.p99,
      p999: result.latency.p99_9,
      maxMs: result.latency.max,
      failed,
      ids: bodies.length * options.idsPerResponse,
      unique,
    };
  };
}
