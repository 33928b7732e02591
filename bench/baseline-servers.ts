/**
 * The baselines ticketd is measured against, each run as its own process:
 * - `naive`: classic Flickr, one REPLACE INTO per request (round-robin over the same backends,
 *   same Express 5 and mysql2 setup as ticketd);
 * - `bare`: Express routes that touch no database: a constant ID, and 1,000 IDs from a counter;
 * - `raw`: node:http alone answering `next` and `ids` (one ID) from a counter, with ticketd's
 *   headers: what Node itself costs per request, the ceiling of any ticketd route.
 * Usage: node dist-bench/bench/baseline-servers.js naive|bare|raw PORT [TICKETD_BACKENDS]
 */
import { createServer, type Server } from 'node:http';
import express from 'express';
import mysql from 'mysql2/promise';
import type { ResultSetHeader } from 'mysql2/promise';

/** The table the naive server takes tickets from (blockSize 1: the ticket is the ID). */
export const NAIVE_TABLE = 'tickets_naive';

function naive(backends: string[]): express.Express {
  const pools = backends.map((url) =>
    mysql.createPool({ uri: url, connectionLimit: 16, supportBigNumbers: true, bigNumberStrings: true }),
  );
  let next = 0;
  const app = express();
  app.set('etag', false);
  app.get('/v1/sequences/:name/next', async (req, res) => {
    const pool = pools[next++ % pools.length]!;
    try {
      const [result] = await pool.query<ResultSetHeader>(`REPLACE INTO ${NAIVE_TABLE} (stub) VALUES ('a')`);
      res.type('application/json').send(`{"sequence":"${req.params.name}","id":"${BigInt(String(result.insertId))}"}`);
    } catch {
      res.status(503).end();
    }
  });
  return app;
}

function bare(): express.Express {
  const app = express();
  app.set('etag', false);
  let counter = 1_000_000;
  app.get('/v1/sequences/:name/next', (req, res) => {
    res.type('application/json').send(`{"sequence":"${req.params.name}","id":"12345"}`);
  });
  app.post('/v1/sequences/:name/ids', (req, res) => {
    const parts: string[] = [];
    for (let i = 0; i < 1000; i++) parts.push(`"${counter++}"`);
    res.type('application/json').send(`{"sequence":"${req.params.name}","ids":[${parts.join(',')}]}`);
  });
  return app;
}

function raw(): Server {
  let counter = 1_000_000;
  return createServer((req, res) => {
    const name = /^\/v1\/sequences\/([a-z0-9_]+)\//.exec(req.url ?? '')?.[1] ?? 'default';
    const body =
      req.url?.includes('/ids') === true
        ? `{"sequence":"${name}","ids":["${counter++}"]}`
        : `{"sequence":"${name}","id":"${counter++}"}`;
    res.writeHead(200, [
      'Cache-Control',
      'no-store',
      'Content-Type',
      'application/json; charset=utf-8',
      'Content-Length',
      String(Buffer.byteLength(body)),
    ]);
    res.end(body);
  });
}

const [kind, port, backends] = process.argv.slice(2);
const app = kind === 'naive' ? naive((backends ?? '').split(',')) : kind === 'raw' ? raw() : bare();
app.listen(Number(port), '127.0.0.1', () => console.log(`listening ${port}`));
