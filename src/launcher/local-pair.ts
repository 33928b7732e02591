/** Backends A (odd tickets) and B (even tickets) as local servers, for dev, tests and benchmarks. */
import { join } from 'node:path';
import {
  backendOptionFile,
  findServerBinary,
  startLocalServer,
  type LocalServer,
  type ServerBinary,
} from './local-mysql.js';

/** Two running local backends. */
export interface LocalPair {
  readonly a: LocalServer;
  readonly b: LocalServer;
  /** Value for TICKETD_BACKENDS. */
  readonly backendsUrl: string;
  /** Stops both. */
  stop(): Promise<void>;
}

/**
 * Starts backends A and B under `dir` (dir/a, dir/b), reusing data directories found there, on
 * the ports given by name (`a`, `b`) or on free ones; `extraArgs` go to both servers after their
 * option files (tests: another increment).
 */
export async function startLocalPair(
  dir: string,
  binary?: ServerBinary,
  ports: Readonly<Record<string, number | undefined>> = {},
  extraArgs: readonly string[] = [],
): Promise<LocalPair> {
  const server = binary ?? findServerBinary(process.env.TICKETD_MYSQLD, process.env.PATH);
  const started = await Promise.allSettled(
    ['a', 'b'].map((name) =>
      startLocalServer({
        name,
        optionFile: backendOptionFile(name),
        dir: join(dir, name),
        binary: server,
        extraArgs,
        ...(ports[name] !== undefined && { port: ports[name] }),
      }),
    ),
  );
  const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failure = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure !== undefined) {
    await Promise.all(servers.map((s) => s.stop()));
    throw failure.reason;
  }
  const [a, b] = servers as [LocalServer, LocalServer];
  return {
    a,
    b,
    backendsUrl: `${a.url},${b.url}`,
    stop: async () => {
      await Promise.all([a.stop(), b.stop()]);
    },
  };
}
