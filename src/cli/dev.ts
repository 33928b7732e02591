/** `ticketd dev`: two local backends plus the HTTP server, for trying ticketd on one machine. */
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Allocator } from '../allocator/allocator.js';
import { DEFAULT_PORT, loadConfig } from '../config/load-config.js';
import { parseSequenceSettings } from '../core/sequence.js';
import { PoolConflictError, SequenceConflictError } from '../core/errors.js';
import { acquireDevLock } from '../launcher/dev-lock.js';
import { DEV_STATE_FILE, portIfFree, readDevState, writeDevState, type DevState } from '../launcher/dev-state.js';
import type { Logger } from '../logger.js';
import { startLocalPair, type LocalPair } from '../launcher/local-pair.js';
import { assertPortFree, startTicketd } from '../server.js';
import { initBackends } from '../service/init.js';
import { TicketService } from '../service/ticket-service.js';
import { WorkerPools } from '../service/worker-pools.js';

/** The demo's opaque sequence, made at start with the settings the README's PUT gives it. */
const DEMO_OPAQUE_SEQUENCE = 'invoices';
const DEMO_OPAQUE_SETTINGS = { blockSize: 10_000, ids: 'opaque' };
/** The demo's Snowflake worker pool (README, "Snowflake worker IDs"), with the default settings. */
const DEMO_WORKER_POOL = 'web';

/** Settings of a dev run. */
export interface DevOptions {
  readonly port: string | undefined;
  readonly dataDir: string;
  /** From TICKETD_ADMIN_TOKEN: wins over the stored one. */
  readonly adminToken: string | undefined;
  readonly logger: Logger;
  readonly onShutdown: (close: () => Promise<void>) => void;
}

/** Starts (or restarts, reusing their data, ports and tokens) backends A and B, runs init, then serves. */
export async function runDev(options: DevOptions): Promise<void> {
  const dir = resolve(options.dataDir);
  const isNew = !existsSync(dir);
  // A taken port is said at once, before anything is made on disk or any server starts.
  const port = Number(options.port ?? DEFAULT_PORT);
  if (Number.isInteger(port) && port > 0) await assertPortFree(port);
  const lock = acquireDevLock(dir);
  const forget = (): void => {
    lock.release();
    if (isNew) rmSync(dir, { recursive: true, force: true });
  };
  const stored = readDevState(dir);
  const ports = { a: await portIfFree(stored.ports.a), b: await portIfFree(stored.ports.b) };
  const pair = await startLocalPair(dir, undefined, ports).catch((error: unknown) => {
    forget();
    throw error;
  });
  try {
    const state: DevState = { ...stored, ports: { a: pair.a.port, b: pair.b.port } };
    writeDevState(dir, state);
    const adminToken = options.adminToken ?? state.adminToken;
    const config = loadConfig({
      backends: pair.backendsUrl,
      port: options.port,
      adminToken,
      clientTokens: `${DEMO_OPAQUE_SEQUENCE}:${state.clientToken}`,
    });
    const allocator = new Allocator({ backends: config.backends, logger: options.logger });
    const setup = new TicketService({ allocator, logger: options.logger });
    await initBackends(allocator, setup)
      .then(() => setup.createSequence(parseSequenceSettings(DEMO_OPAQUE_SEQUENCE, DEMO_OPAQUE_SETTINGS)))
      .catch((error: unknown) => {
        // Data of one's own with another `invoices`: the demo serves it as it is.
        if (!(error instanceof SequenceConflictError)) throw error;
        options.logger.warn(
          { sequence: DEMO_OPAQUE_SEQUENCE, err: error.message },
          'the demo sequence exists with other settings; left as it is',
        );
      })
      .then(() => new WorkerPools({ allocator }).create(DEMO_WORKER_POOL, {}))
      .catch((error: unknown) => {
        // Likewise a `web` pool of one's own with other settings.
        if (!(error instanceof PoolConflictError)) throw error;
        options.logger.warn(
          { pool: DEMO_WORKER_POOL, err: error.message },
          'the demo worker pool exists with other settings; left as it is',
        );
      })
      .finally(() => setup.close());
    const running = await startTicketd({ config, logger: options.logger, processMetrics: true });
    options.onShutdown(async () => {
      await running.close();
      await pair.stop();
      lock.release();
    });
    const moved = (['a', 'b'] as const).filter(
      (n) => stored.ports[n] !== undefined && stored.ports[n] !== state.ports[n],
    );
    const stateFile = join(options.dataDir, DEV_STATE_FILE);
    console.log(
      banner({
        httpPort: running.port,
        pair,
        state,
        adminToken,
        tokenFromEnv: options.adminToken !== undefined,
        moved,
        stateFile,
      }),
    );
  } catch (error) {
    await pair.stop();
    lock.release();
    throw error;
  }
}

interface BannerFacts {
  readonly httpPort: number;
  readonly pair: LocalPair;
  readonly state: DevState;
  readonly adminToken: string;
  readonly tokenFromEnv: boolean;
  readonly moved: readonly ('a' | 'b')[];
  /** Where the ports and tokens are kept, as the data folder was given. */
  readonly stateFile: string;
}

/** What the demo prints once it serves: where everything is, the line to paste, and commands that run as printed. */
function banner(f: BannerFacts): string {
  const host = `localhost:${f.httpPort}`;
  const movedNote = f.moved
    .map(
      (n) =>
        `\n  backend ${n.toUpperCase()}'s port from the last run was taken, so it moved: paste the export line below again`,
    )
    .join('');
  return `
ticketd dev is running on http://${host}
  backend A (odd tickets):  ${f.pair.a.url}   data in ${f.pair.a.dir}
  backend B (even tickets): ${f.pair.b.url}   data in ${f.pair.b.dir}${movedNote}
  admin token: ${f.adminToken} (${f.tokenFromEnv ? 'from TICKETD_ADMIN_TOKEN' : `kept in ${f.stateFile}; set TICKETD_ADMIN_TOKEN to choose it`})
  opaque sequence ${DEMO_OPAQUE_SEQUENCE}: issues only to its client token ${f.state.clientToken}
  Snowflake worker pool ${DEMO_WORKER_POOL}: worker IDs for createSnowflake (node examples/sdk/snowflake.mjs)

In another shell in this folder, for npx ticketd, the README's examples and the SDK:
  export TICKETD_BACKENDS=${f.pair.backendsUrl} TICKETD_ADMIN_TOKEN=${f.adminToken} INVOICES_TOKEN=${f.state.clientToken}${
    f.httpPort === DEFAULT_PORT ? '' : ` TICKETD_URL=http://${host}`
  }

Try:
  curl -X POST '${host}/v1/sequences/default/ids?count=3'
  curl ${host}/v1/sequences/default/next
  curl -X POST '${host}/v1/sequences/${DEMO_OPAQUE_SEQUENCE}/ids?count=3' -H "Authorization: Bearer $INVOICES_TOKEN"
  npx ticketd check
  npx ticketd sequences list
  npx ticketd workers list

Ctrl-C stops ticketd and both servers; running it again reuses their data, ports and tokens.
`;
}
