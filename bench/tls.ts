/**
 * Scenario 9: what TLS costs. Two backends that serve TLS (certificates made by openssl here), and
 * ticketd processes side by side: one reaching them in plaintext (ssl-mode=DISABLED), one over
 * verified TLS (VERIFY_IDENTITY), one serving HTTPS to its clients. Rounds alternate the two sides
 * of each pair. Handshakes are counted on the servers (MariaDB's Ssl_accepts), per 10,000 requests.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { Allocator } from '../src/allocator/allocator.js';
import { loadConfig } from '../src/config/load-config.js';
import { parseSequenceSettings } from '../src/core/sequence.js';
import { startLocalPair, type LocalPair } from '../src/launcher/local-pair.js';
import { silentLogger } from '../src/logger.js';
import { initBackends } from '../src/service/init.js';
import { TicketService } from '../src/service/ticket-service.js';
import { makeCertificates } from '../test/support/tls-certs.js';
import type { HttpResult, Load } from './load.js';
import { serveTicketd } from './processes.js';

/** A row of scenario 9 with the handshakes its run cost, per 10,000 requests. */
export type TlsRow = HttpResult & { readonly handshakesPer10kRequests: number | null };

/** What scenario 9 measured. */
export interface TlsResults {
  /** `GET …/next` (blocks cached) and `GET …/next` on blockSize 1 (a ticket per request), plaintext then TLS to the backends, in rounds. */
  readonly backends: TlsRow[];
  /** `GET …/next` from a plain HTTP front end and from an HTTPS one, in rounds. */
  readonly clients: HttpResult[];
}

const ROUNDS = 2;

/** Runs scenario 9 on a pair of its own; `load` is the run's own load function. */
export async function measureTls(load: Load): Promise<TlsResults> {
  const certs = makeCertificates();
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-bench-tls-'));
  const children: ChildProcess[] = [];
  let pair: LocalPair | undefined;
  try {
    pair = await startLocalPair(dir, undefined, {}, [
      `--ssl-ca=${certs.ca}`,
      `--ssl-cert=${certs.server.cert}`,
      `--ssl-key=${certs.server.key}`,
    ]);
    const urls = (query: string): string =>
      pair!.backendsUrl
        .split(',')
        .map((u) => `${u}?${query}`)
        .join(',');
    const plain = urls('ssl-mode=DISABLED');
    const verified = urls(`ssl-mode=VERIFY_IDENTITY&ssl-ca=${certs.ca}`);
    const allocator = new Allocator({ backends: loadConfig({ backends: verified }).backends, logger: silentLogger });
    const setup = new TicketService({ allocator, logger: silentLogger });
    await initBackends(allocator, setup);
    await setup.createSequence(parseSequenceSettings('tickets_each', { blockSize: 1 }));
    await setup.close();
    const serve = async (backends: string, extra: Record<string, string> = {}): Promise<string> => {
      const { url, child } = await serveTicketd({ TICKETD_BACKENDS: backends, ...extra });
      children.push(child);
      return url;
    };
    const plainUrl = await serve(plain);
    const tlsUrl = await serve(verified);
    const httpsUrl = await serve(plain, { TICKETD_TLS_CERT: certs.server.cert, TICKETD_TLS_KEY: certs.server.key });
    const accepts = await handshakeCounter(pair, readFileSync(certs.ca, 'utf8'));
    try {
      const backends: TlsRow[] = [];
      const clients: HttpResult[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        for (const [what, sequence] of [
          ['blocks cached', 'default'],
          ['a ticket per request', 'tickets_each'],
        ] as const) {
          for (const [side, base] of [
            ['plaintext', plainUrl],
            ['TLS (VERIFY_IDENTITY)', tlsUrl],
          ] as const) {
            const before = await accepts.read();
            const row = await load({
              name: `${side} to the backends, next (${what})`,
              url: `${base}/v1/sequences/${sequence}/next`,
              idsPerResponse: 1,
              check: true,
            });
            const requests = row.ids;
            backends.push({
              ...row,
              handshakesPer10kRequests:
                requests === 0 ? null : Math.round((((await accepts.read()) - before) / requests) * 10_000 * 100) / 100,
            });
          }
        }
        for (const [side, base] of [
          ['HTTP front end', plainUrl],
          ['HTTPS front end', httpsUrl],
        ] as const) {
          clients.push(
            await load({
              name: `${side}, next`,
              url: `${base}/v1/sequences/default/next`,
              idsPerResponse: 1,
              check: true,
            }),
          );
        }
      }
      return { backends, clients };
    } finally {
      await accepts.close();
    }
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await pair?.stop();
    rmSync(dir, { recursive: true, force: true });
    certs.dispose();
  }
}

/** Sums Ssl_accepts over both servers, on connections of its own (opened once: they count one accept each, before the first read). */
async function handshakeCounter(
  pair: LocalPair,
  ca: string,
): Promise<{ read(): Promise<number>; close(): Promise<void> }> {
  const conns = await Promise.all(
    [pair.a, pair.b].map((s) => mysql.createConnection({ host: '127.0.0.1', port: s.port, user: 'root', ssl: { ca } })),
  );
  return {
    read: async () => {
      let total = 0;
      for (const conn of conns) {
        const [rows] = await conn.query<mysql.RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Ssl_accepts'");
        total += Number(rows[0]?.Value ?? 0);
      }
      return total;
    },
    close: async () => {
      await Promise.all(conns.map((c) => c.end()));
    },
  };
}
