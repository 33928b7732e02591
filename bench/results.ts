/** The shape of one bench run's results, and the helpers that read across scenarios. */
import type { ClientsResults } from './clients.js';
import type { StepCost } from './claim-cost.js';
import type { InProcessResult } from './in-process.js';
import type { HttpResult } from './load.js';
import type { OneIdResults } from './one-id.js';
import type { CostResult } from './opaque-cost.js';
import type { SnowflakeResults } from './snowflake.js';
import type { StrictResults } from './strict.js';
import type { TlsResults } from './tls.js';
import type { WrkResult } from './wrk-load.js';

/** Everything a run produced. */
export interface BenchResults {
  readonly date: string;
  readonly machine: string;
  readonly command: string;
  readonly seconds: number;
  readonly single: HttpResult[];
  readonly batch: HttpResult[];
  readonly workers: HttpResult[];
  readonly smallBlocks: HttpResult;
  readonly inProcess: InProcessResult[];
  readonly failover: HttpResult & { readonly note: string };
  readonly claimCost: StepCost[];
  readonly snowflake: SnowflakeResults;
  /** Scenario 9: TLS to the backends against plaintext, and HTTPS for clients against HTTP. */
  readonly tls: TlsResults;
  /** Scenario 10: strict sequences beside ordered, through the leader and a follower, and the failover stall. */
  readonly strict: StrictResults;
  /** Scenario 11: one ID per request against node:http alone, one process and `serve --workers 2`. */
  readonly oneId: OneIdResults;
  /** Scenario 12: the Java, Python and Go clients beside the Node SDK. */
  readonly clients: ClientsResults;
  readonly opaque: {
    readonly http: HttpResult[];
    /** Batches of 1,000 measured with wrk, server-bound: ordered, opaque, ordered of 20 digits, in rounds. */
    readonly wrk: WrkResult[];
    readonly perId: CostResult[];
    readonly inserts: CostResult[];
  };
}

/** Every row of scenario 10, strict and ordered. */
export function strictRows(s: StrictResults): HttpResult[] {
  return s.pairs.flatMap((p) => [p.ordered, p.strict]);
}

/** Every autocannon row whose IDs were checked for uniqueness. */
export function checkedRows(r: BenchResults): HttpResult[] {
  return [
    ...r.single,
    ...r.batch,
    ...r.workers,
    r.smallBlocks,
    r.failover,
    ...r.opaque.http,
    ...r.tls.backends,
    ...r.tls.clients,
    ...strictRows(r.strict),
    r.oneId.checked,
  ];
}
