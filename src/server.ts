/** Wires a running ticketd: allocator → service → HTTP, with start-up checks before listening. */
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { Allocator, type ReturnEvents } from './allocator/allocator.js';
import type { Clock, Random } from './core/clock.js';
import type { BackendOptions } from './backend/backend-options.js';
import type { Config } from './config/load-config.js';
import { reloadSecrets, type Secrets } from './config/secrets.js';
import { BackendMisconfiguredError, PortInUseError } from './core/errors.js';
import type { MetricsSource } from './http/app.js';
import { createListener, type RequestListener } from './http/listener.js';
import { createPeerListener } from './http/peer-listener.js';
import { drain as drainListener, trackAnswers } from './http/draining.js';
import { Credentials } from './http/credentials.js';
import { readHttpsFiles } from './http/https-files.js';
import { countedFor } from './http/visibility.js';
import { parserRefusal } from './http/problem.js';
import { packageVersion } from './paths.js';
import type { Logger } from './logger.js';
import { createMetrics, type TicketdMetrics } from './metrics/metrics.js';
import { ActivityHistory } from './service/activity.js';
import { TicketService } from './service/ticket-service.js';
import { strictForwarder } from './service/strict-forwarder.js';
import { peerProof } from './service/peer-proof.js';
import { WorkerLeases, type Workers } from './service/worker-leases.js';
import { WorkerPools } from './service/worker-pools.js';
import { UsageReporter } from './service/usage-reporter.js';
import { runChecks } from './service/check.js';
import { errorText } from './util/error-text.js';

/** The test-only variable that plants a bug in strict sequences for the checker to catch (docs/strict-sequences.md, "Checked"). */
export const PLANTED_BUG_VARIABLE = 'TICKETD_TEST_PLANT_STRICT_BUG';

/** How long close() lets requests in flight finish before it ends their connections. */
export const SHUTDOWN_GRACE_MS = 8000;
/** Where the peer listeners bind when TICKETD_HOST is unset: loopback, never every interface. */
export const PEER_DEFAULT_HOST = '127.0.0.1';

/** What startTicketd needs. */
export interface TicketdOptions {
  readonly config: Config;
  readonly logger: Logger;
  /** Address to listen on; default: the config's TICKETD_HOST (all interfaces when that is unset too). */
  readonly host?: string;
  readonly backendOptions?: BackendOptions;
  readonly clock?: Clock;
  readonly random?: Random;
  /** Adds process_* and nodejs_* series to /metrics (serve does; in-process tests need not). */
  readonly processMetrics?: boolean;
  /** What /metrics serves; default: this process's registry. Cluster workers aggregate instead. */
  readonly metricsSource?: (metrics: TicketdMetrics) => MetricsSource;
  /** Told how many IDs are given back, reused and lost (accounting); default: nowhere. */
  readonly returnEvents?: ReturnEvents;
}

/** A listening ticketd. */
export interface RunningTicketd {
  readonly port: number;
  readonly url: string;
  /** Where other front ends forward a strict sequence's requests to this process. */
  readonly peerUrl: string;
  readonly service: TicketService;
  /** Snowflake worker pools and their leases. */
  readonly workers: Workers;
  readonly metrics: TicketdMetrics;
  /** IDs per second over the last minutes (the status page chart). */
  readonly activity: ActivityHistory;
  /**
   * Reads the token files, the HTTPS certificate and key and the backends' TLS files again (SIGHUP):
   * new connections and requests use them, those in flight finish. What cannot be read keeps its
   * old value and is logged in one line; 'error' then.
   */
  reload(): 'ok' | 'error';
  /** Stops listening, ends open connections and closes the backend pools. */
  close(): Promise<void>;
}

/**
 * Runs the checks of `ticketd check` on every reachable backend, then listens. A misconfigured
 * backend stops the start; one that does not answer is only logged, and is checked on every new
 * connection once it does.
 */
export async function startTicketd(options: TicketdOptions): Promise<RunningTicketd> {
  const { config, logger } = options;
  if (config.allowUnsafeDurability) {
    logger.warn({}, 'started with --allow-unsafe-durability: a crash of a backend can make IDs repeat; for demos only');
  }
  const metrics = createMetrics({
    processMetrics: options.processMetrics ?? false,
    runsOutWarningSeconds: config.runsOutWarningSeconds,
  });
  const allocator = createAllocator(options, metrics);
  await checkBeforeListening(allocator, config, logger);
  // Strict sequences: this process leads or forwards (service/strict-sequence.ts); its peers reach it
  // on a listener of its own, so that each worker process of `serve --workers` is reachable itself.
  // Forwarded calls show the fleet's peer proof; the peer listener admits no one else.
  const proof = peerProof(config.peerSecret, config.backends);
  const forwarder = strictForwarder(proof);
  let peerUrl = '';
  const unfenced = process.env[PLANTED_BUG_VARIABLE] === 'skip-fence';
  if (unfenced)
    logger.error(
      {},
      `${PLANTED_BUG_VARIABLE}=skip-fence: strict sequences serve past their lease, a planted bug for the checker's own test; never in production`,
    );
  const strict = {
    instance: randomUUID(),
    url: () => peerUrl,
    forward: forwarder.forward,
    maxCount: config.maxCount,
    events: metrics.strictEvents,
    unfenced,
  };
  const service = new TicketService({ allocator, logger, strict, ...(options.clock && { clock: options.clock }) });
  const pools = new WorkerPools({
    allocator,
    layout: config.snowflakeLayout,
    ...(options.clock && { clock: options.clock }),
  });
  const leases = new WorkerLeases({
    allocator,
    pools,
    logger,
    claimsPolicy: config.claims,
    events: metrics.workerEvents,
    ...(options.random && { random: options.random }),
  });
  const workers: Workers = { pools, leases };
  const credentials = new Credentials({ adminTokens: config.adminTokens, clientTokens: config.clientTokens });
  metrics.attach(service, pools);
  // The status page's chart is open to all: it counts ordered sequences' IDs only (http/visibility.ts).
  const activity = new ActivityHistory(() => service.issuedTotal(countedFor(service, false)), options.clock);
  activity.start();
  const app = createListener({
    service,
    workers,
    logger,
    metrics: options.metricsSource?.(metrics) ?? {
      contentType: metrics.registry.contentType,
      render: () => metrics.registry.metrics(),
    },
    credentials,
    observe: metrics.answered,
    countCaller: metrics.called,
    rateLimitPerSecond: config.rateLimitPerSecond,
    maxCount: config.maxCount,
    activity,
    version: packageVersion(),
    startedAt: (options.clock ?? Date.now)(),
    runsOutWarningSeconds: config.runsOutWarningSeconds,
    ...(options.clock && { clock: options.clock }),
  });
  const host = options.host ?? config.host;
  const server = await listen(app, config, host).catch(async (error: unknown) => {
    activity.stop();
    await service.close();
    throw portError(error, config.port);
  });
  // Loopback unless an address is set: the peer port is for this fleet's front ends, never every interface by default.
  const peerHost = host ?? PEER_DEFAULT_HOST;
  const peer = await listen(createPeerListener(app, proof), { ...config, port: config.peerPort }, peerHost, true).catch(
    async (error: unknown) => {
      await drain(server);
      activity.stop();
      await service.close();
      throw portError(error, config.peerPort, 'TICKETD_PEER_PORT');
    },
  );
  peerUrl = `${config.tls === undefined ? 'http' : 'https'}://${config.advertiseHost}:${(peer.address() as AddressInfo).port}`;
  const port = (server.address() as AddressInfo).port;
  // What this front end does with the IDs it leases, written to every backend (one instance per process or worker).
  const usage = new UsageReporter({
    allocator,
    logger,
    tally: service.usage,
    holdings: () => service.holdings(),
    instance: strict.instance,
    flushEveryMs: config.usageFlushMs,
    secondsLeft: (sequence) => service.capacityStatus(sequence)?.secondsLeft ?? null,
  });
  usage.start();
  logger.info(
    { port, https: config.tls !== undefined, backends: config.backends.map((b) => b.label) },
    'ticketd listening',
  );
  return {
    port,
    url: `${config.tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    reload: reloader({ config, logger, metrics, credentials, allocator, servers: [server, peer] }),
    service,
    workers,
    metrics,
    activity,
    peerUrl,
    close: async () => {
      await Promise.all([drain(server), drain(peer)]);
      activity.stop();
      // Nothing is handed out any more: what can be is given back, then what is still cached is
      // abandoned for `shutdown`, and said so.
      await service.giveBack();
      await usage.stop();
      // The strict sequences give their leases back here, before the backend pools close.
      await service.close();
      forwarder.close();
    },
  };
}

/**
 * The checks of `ticketd check`, once, through the allocator: every backend's first guarded
 * connection then compares itself with what passed here. A misconfiguration refuses to start.
 */
async function checkBeforeListening(allocator: Allocator, config: Config, logger: Logger): Promise<void> {
  const findings = await runChecks(allocator, config.allowUnsafeDurability);
  const misconfigured = findings.filter((f) => f.kind === 'misconfigured').map((f) => f.message);
  if (misconfigured.length > 0) {
    await allocator.close();
    throw new BackendMisconfiguredError(misconfigured.join('\n'));
  }
  for (const f of findings)
    (f.kind === 'info' ? logger.info.bind(logger) : logger.warn.bind(logger))({ kind: f.kind }, f.message);
}

/**
 * What SIGHUP does in a serving process: the token files, the HTTPS certificate and key, and the
 * backends' TLS files, each read again; what cannot be read keeps its old value, in one error line.
 */
function reloader(parts: {
  config: Config;
  logger: Logger;
  metrics: TicketdMetrics;
  credentials: Credentials;
  allocator: Allocator;
  servers: readonly Server[];
}): () => 'ok' | 'error' {
  const { config, logger, metrics, credentials, allocator, servers } = parts;
  let secrets: Secrets = { adminTokens: config.adminTokens, clientTokens: config.clientTokens };
  return () => {
    const problems: string[] = [];
    try {
      secrets = reloadSecrets(config.secretFiles, secrets);
      credentials.replace(secrets);
    } catch (error) {
      problems.push(errorText(error));
    }
    if (config.tls !== undefined) {
      try {
        const context = readHttpsFiles(config.tls);
        for (const server of servers) (server as HttpsServer).setSecureContext(context);
      } catch (error) {
        problems.push(errorText(error));
      }
    }
    problems.push(...allocator.reloadTls());
    const result = problems.length === 0 ? 'ok' : 'error';
    metrics.reloaded(result);
    if (result === 'ok') logger.info({}, 'reloaded the token, certificate and key files');
    else logger.error({ problems }, `reload kept the old value of what could not be read: ${problems.join('; ')}`);
    return result;
  };
}

/** The allocator of a serving process: its backends, policies and metrics. */
function createAllocator(options: TicketdOptions, metrics: TicketdMetrics): Allocator {
  const { config, logger } = options;
  return new Allocator({
    backends: config.backends,
    adminBackends: config.adminBackends,
    events: metrics.events,
    logger,
    allowUnsafeDurability: config.allowUnsafeDurability,
    regressionPolicy: config.onRegression,
    claimsPolicy: config.claims,
    ...(options.clock && { clock: options.clock }),
    ...(options.random && { random: options.random }),
    ...(options.backendOptions && { backendOptions: options.backendOptions }),
    ...(options.returnEvents && { returnEvents: options.returnEvents }),
  });
}

/**
 * Listens on the port (and host, if given), over HTTPS when TICKETD_TLS_CERT is set (asking for a
 * client certificate when TICKETD_TLS_CLIENT_CA is), answering what Node's parser refused in problem+json.
 */
async function listen(
  app: RequestListener,
  config: Config,
  host: string | undefined,
  exclusive = false,
): Promise<Server> {
  const { port, tls } = config;
  const created: Server =
    tls === undefined
      ? createHttpServer(app)
      : createHttpsServer(
          {
            ...readHttpsFiles(tls),
            requestCert: tls.clientCa !== undefined,
            rejectUnauthorized: tls.clientCa !== undefined,
          },
          app,
        );
  const server = await new Promise<Server>((done, fail) => {
    created.once('error', fail);
    const ready = (): void => {
      created.off('error', fail);
      done(created);
    };
    // Exclusive: a worker of node:cluster listens on a port of its own, not the primary's shared one.
    created.listen({ port, ...(host === undefined ? {} : { host }), exclusive }, ready);
  });
  // Connections from load generators stay open; keep-alive must not outlive a close().
  server.keepAliveTimeout = 5000;
  trackAnswers(server);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    // A request Node's parser refused: answer in problem+json rather than an empty 431/400 (as
    // Node itself does, only on a connection that has not been answered on yet).
    if (socket.writable && socket.bytesWritten === 0 && (error.code?.startsWith('HPE_') ?? false))
      socket.end(parserRefusal(error.code));
    else socket.destroy();
  });
  return server;
}

/** Stops accepting, lets requests in flight finish (answering `Connection: close`), and drops keep-alive connections as they go idle. */
function drain(server: Server): Promise<void> {
  return drainListener(server, SHUTDOWN_GRACE_MS);
}

/** Resolves when nothing listens on the port (all interfaces); rejects with PortInUseError otherwise. */
export function assertPortFree(port: number): Promise<void> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', (error) => fail(portError(error, port)));
    probe.listen(port, () => probe.close(() => done()));
  });
}

function portError(error: unknown, port: number, setting = '--port or TICKETD_PORT'): Error {
  if ((error as NodeJS.ErrnoException | null)?.code !== 'EADDRINUSE')
    return error instanceof Error ? error : new Error(`port ${port}: ${errorText(error)}`);
  return new PortInUseError(`port ${port} is already in use (another ticketd?); choose another with ${setting}`, {
    cause: error,
  });
}
