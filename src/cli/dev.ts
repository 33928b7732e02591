/** `ticketd dev`: two local backends plus the HTTP server, for trying ticketd on one machine. */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { Allocator } from '../allocator/allocator.js';
import { DEFAULT_PORT, loadConfig } from '../config.js';
import { acquireDevLock } from '../launcher/dev-lock.js';
import type { Logger } from '../logger.js';
import { startLocalPair, type LocalPair } from '../launcher/local-pair.js';
import { assertPortFree, startTicketd } from '../server.js';
import { initBackends } from '../service/init.js';
import { TicketService } from '../service/ticket-service.js';

/** Settings of a dev run. */
export interface DevOptions {
  readonly port: string | undefined;
  readonly dataDir: string;
  readonly adminToken: string | undefined;
  readonly logger: Logger;
  readonly onShutdown: (close: () => Promise<void>) => void;
}

/** Starts (or restarts, reusing their data) backends A and B, runs init, then serves. */
export async function runDev(options: DevOptions): Promise<void> {
  const dir = resolve(options.dataDir);
  const adminToken = options.adminToken ?? randomBytes(18).toString('base64url');
  const lock = acquireDevLock(dir);
  const pair = await startPairOnFreePort(dir, options.port).catch((error: unknown) => {
    lock.release();
    throw error;
  });
  try {
    const config = loadConfig({ backends: pair.backendsUrl, port: options.port, adminToken });
    const allocator = new Allocator({ backends: config.backends, logger: options.logger });
    const setup = new TicketService({ allocator, logger: options.logger });
    await initBackends(allocator, setup).finally(() => setup.close());
    const running = await startTicketd({ config, logger: options.logger, processMetrics: true });
    options.onShutdown(async () => {
      await running.close();
      await pair.stop();
      lock.release();
    });
    const base = `http://localhost:${running.port}`;
    console.log(`
ticketd dev is running on ${base}
  backend A (odd tickets):  ${pair.a.url}   data in ${pair.a.dir}
  backend B (even tickets): ${pair.b.url}   data in ${pair.b.dir}
  admin token: ${adminToken}${options.adminToken === undefined ? ' (random; set TICKETD_ADMIN_TOKEN to choose it)' : ' (from TICKETD_ADMIN_TOKEN)'}

For ticketd check, sequences, migrate and the README's examples, in another shell:
  export TICKETD_BACKENDS=${pair.backendsUrl} TICKETD_ADMIN_TOKEN=${adminToken}

Try:
  curl -X POST '${base}/v1/sequences/default/ids?count=3'
  curl ${base}/v1/sequences/default/next
  curl -X PUT ${base}/v1/sequences/orders -H "Authorization: Bearer $TICKETD_ADMIN_TOKEN" -H 'Content-Type: application/json' -d '{"blockSize":100}'

Ctrl-C stops ticketd and both servers; running it again reuses their data.
`);
  } catch (error) {
    await pair.stop();
    lock.release();
    throw error;
  }
}

/** Starts the pair, after making sure the HTTP port is free: said at once, not after the servers' start-up. */
async function startPairOnFreePort(dir: string, portSetting: string | undefined): Promise<LocalPair> {
  const port = Number(portSetting ?? DEFAULT_PORT);
  if (Number.isInteger(port) && port > 0) await assertPortFree(port);
  return startLocalPair(dir);
}
