/** Wires a running ticketd: allocator → service → HTTP, with start-up checks before listening. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Allocator } from './allocator/allocator.js';
import type { Clock, Random } from './allocator/backend-health.js';
import type { BackendOptions } from './backend/backend.js';
import type { Config } from './config.js';
import { BackendMisconfiguredError } from './errors.js';
import { createApp } from './http/app.js';
import type { Logger } from './logger.js';
import { TicketService } from './service/ticket-service.js';

/** What startTicketd needs. */
export interface TicketdOptions {
  readonly config: Config;
  readonly logger: Logger;
  /** Interface to listen on (all interfaces when omitted). */
  readonly host?: string;
  readonly backendOptions?: BackendOptions;
  readonly clock?: Clock;
  readonly random?: Random;
}

/** A listening ticketd. */
export interface RunningTicketd {
  readonly port: number;
  readonly url: string;
  readonly service: TicketService;
  /** Stops listening, ends open connections and closes the backend pools. */
  close(): Promise<void>;
}

/**
 * Checks every reachable backend (stripes: offsets and increment), then listens. A misconfigured
 * backend stops the start; one that does not answer is only logged, and is checked when it does.
 */
export async function startTicketd(options: TicketdOptions): Promise<RunningTicketd> {
  const { config, logger } = options;
  const allocator = new Allocator({
    backends: config.backends,
    logger,
    ...(options.clock && { clock: options.clock }),
    ...(options.random && { random: options.random }),
    ...(options.backendOptions && { backendOptions: options.backendOptions }),
  });
  const failures = await allocator.probe();
  const misconfigured = failures.find((f) => f.error instanceof BackendMisconfiguredError);
  if (misconfigured !== undefined) {
    await allocator.close();
    throw misconfigured.error;
  }
  for (const f of failures) {
    logger.warn({ backend: f.backend, err: f.error instanceof Error ? f.error.message : String(f.error) }, 'backend not reachable at start');
  }
  const service = new TicketService({ allocator, logger, ...(options.clock && { clock: options.clock }) });
  const app = createApp({ service, logger, adminToken: config.adminToken });
  const server = await new Promise<Server>((done, fail) => {
    const callback = (error?: Error): void => (error ? fail(error) : done(s));
    const s = options.host === undefined ? app.listen(config.port, callback) : app.listen(config.port, options.host, callback);
  }).catch(async (error: unknown) => {
    await service.close();
    throw error;
  });
  // Connections from load generators stay open; keep-alive must not outlive a close().
  server.keepAliveTimeout = 5000;
  const port = (server.address() as AddressInfo).port;
  logger.info({ port, backends: config.backends.map((b) => b.label) }, 'ticketd listening');
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    service,
    close: async () => {
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), 2000).unref();
      await closed;
      await service.close();
    },
  };
}
