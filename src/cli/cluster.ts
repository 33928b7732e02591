/**
 * `serve --workers N`: a primary process forks N workers that share the listening port. Each
 * worker has its own cache and allocator and fetches its own tickets, which is safe for the same
 * reason several ticketd hosts are: a ticket is issued once, to one process. /metrics in any worker
 * answers for all of them, aggregated by the primary.
 */
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { MetricsSource } from '../http/app.js';
import type { Logger } from '../logger.js';
import type { TicketdMetrics } from '../metrics/metrics.js';

/** A worker that dies after it was serving is replaced, at most this often. */
export const WORKER_RESTART_DELAY_MS = 1000;
/** How long a worker's /metrics waits for the primary's aggregate. */
const METRICS_TIMEOUT_MS = 5000;

interface MetricsRequest {
  readonly type: 'ticketd:metrics';
  readonly id: number;
}
interface MetricsReply {
  readonly type: 'ticketd:metrics-reply';
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}

/** Whether an IPC message (anything a process sent) is one of ours, of this `type`. */
function isMessage<T extends MetricsRequest | MetricsReply>(message: unknown, type: T['type']): message is T {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;
}

/** True in the primary of a `serve --workers N` with N > 1. */
export function isClusterPrimary(workers: number): boolean {
  return workers > 1 && cluster.isPrimary;
}

/**
 * Runs the primary: forks the workers, replaces one that dies after it was serving, and stops when
 * one fails to start (its own stderr line says why). close() stops them all gracefully.
 */
export function runPrimary(
  workers: number,
  logger: Logger,
): { close(): Promise<void>; signalWorkers(signal: NodeJS.Signals): void } {
  const aggregator = new AggregatorRegistry();
  const serving = new Set<Worker>();
  let closing = false;

  const fork = (): void => {
    const worker = cluster.fork();
    worker.on('listening', () => serving.add(worker));
    worker.on('message', (message: unknown) => {
      if (!isMessage<MetricsRequest>(message, 'ticketd:metrics')) return;
      aggregator.clusterMetrics().then(
        (text) => worker.send({ type: 'ticketd:metrics-reply', id: message.id, text } satisfies MetricsReply),
        (error: unknown) =>
          worker.send({ type: 'ticketd:metrics-reply', id: message.id, error: String(error) } satisfies MetricsReply),
      );
    });
    // Node's types say a number, but a worker killed by a signal exits with code null.
    worker.on('exit', (code: number | null, signal: string | null) => {
      const wasServing = serving.delete(worker);
      if (closing) return;
      if (!wasServing) {
        // A worker that could not start (bad config, misconfigured backend) would fail again.
        logger.error({ worker: worker.process.pid, code, signal }, 'worker failed to start; stopping');
        closing = true;
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
        process.exitCode = code === 0 || code === null ? 1 : code;
        return;
      }
      logger.warn({ worker: worker.process.pid, code, signal }, 'worker died; starting another');
      setTimeout(() => {
        if (!closing) fork();
      }, WORKER_RESTART_DELAY_MS).unref();
    });
  };
  for (let i = 0; i < workers; i++) fork();
  logger.info({ workers }, 'ticketd primary started');

  return {
    signalWorkers: (signal) => {
      for (const w of Object.values(cluster.workers ?? {})) if (w !== undefined && !w.isDead()) w.process.kill(signal);
    },
    close: async () => {
      closing = true;
      const all = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
      await Promise.all(
        all.map(
          (w) =>
            new Promise<void>((done) => {
              if (w.isDead()) {
                done();
                return;
              }
              w.once('exit', () => done());
              // Each worker shuts down gracefully on SIGTERM: in-flight requests finish.
              w.process.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}

/** In a worker: /metrics asks the primary, which gathers every worker's registry. */
export function workerMetricsSource(metrics: TicketdMetrics): MetricsSource {
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([metrics.registry]);
  const pending = new Map<number, (reply: MetricsReply) => void>();
  let next = 0;
  process.on('message', (message: unknown) => {
    if (isMessage<MetricsReply>(message, 'ticketd:metrics-reply')) pending.get(message.id)?.(message);
  });
  return {
    contentType: metrics.registry.contentType,
    render: () =>
      new Promise((done, fail) => {
        const id = next++;
        const timer = setTimeout(() => {
          pending.delete(id);
          fail(new Error('the primary did not answer for metrics'));
        }, METRICS_TIMEOUT_MS);
        pending.set(id, (reply) => {
          clearTimeout(timer);
          pending.delete(id);
          if (reply.text !== undefined) done(reply.text);
          else fail(new Error(reply.error ?? 'no metrics'));
        });
        process.send?.({ type: 'ticketd:metrics', id } satisfies MetricsRequest);
      }),
  };
}
