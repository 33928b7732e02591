/**
 * A TCP proxy on 127.0.0.1 standing for a virtual address: what MHA/orchestrator-style failover
 * moves from a dead primary to a promoted replica. Retargeting drops every open connection, as a
 * moved address does, and sends new ones to the new server.
 */
import { createServer, connect, type Socket } from 'node:net';

/** A running proxy. */
export interface TcpProxy {
  readonly port: number;
  /** New connections go to this port from now on; open ones are cut. */
  retarget(port: number): void;
  close(): Promise<void>;
}

/** Starts a proxy to 127.0.0.1:targetPort on a free port. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let target = targetPort;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target, '127.0.0.1');
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('proxy has no port');
  return {
    port: address.port,
    retarget: (port) => {
      target = port;
      for (const s of open) s.destroy();
    },
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
