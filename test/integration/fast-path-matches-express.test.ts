/**
 * The issuing routes' fast path (src/http/fast-path.ts) answers exactly as the Express routes do:
 * the same requests, sent to a server with the fast path ahead of Express and to one with Express
 * alone, both over the same real ticketd service, give the same status, headers (in order, Date
 * aside) and body, and count the same (route, method, status). Issued IDs differ by design (each
 * request takes a new one): they are masked, and each side's Content-Length is checked against its
 * own body. The test also proves which requests the fast path took and which it left to Express.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/http/app.js';
import { Credentials } from '../../src/http/credentials.js';
import { problemView } from '../../src/http/backend-names.js';
import { createFastPath } from '../../src/http/fast-path.js';
import { issuingGuards } from '../../src/http/issuing-guards.js';
import { silentLogger } from '../../src/logger.js';
import type { RunningTicketd } from '../../src/server.js';
import { putSequence, sharedBackends, startInProcess } from '../support/ticketd.js';

const GUARDED_TOKEN = 'guarded-client-token-0001';
const OTHER_TOKEN = 'some-other-token-00000001';
const MAX_COUNT = 50;

interface Raw {
  readonly status: number;
  readonly headers: string[];
  readonly body: string;
}

interface Sample {
  readonly what: string;
  readonly method: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** True when the fast path must answer it; false when it must leave it to Express. */
  readonly fast: boolean;
  readonly status: number;
}

/** A server over the running service: the fast path ahead of Express, or Express alone. */
function serve(
  running: RunningTicketd,
  withFastPath: boolean,
  rateLimitPerSecond?: number,
): { server: Server; took: string[]; observed: string[] } {
  const credentials = new Credentials({
    adminTokens: [],
    clientTokens: new Map([['guarded', [{ name: 'guarded-client', token: GUARDED_TOKEN }]]]),
  });
  const guards = issuingGuards(credentials, rateLimitPerSecond);
  const observed: string[] = [];
  const observe = (route: string, method: string, status: number): void =>
    void observed.push(`${route} ${method} ${status}`);
  const options = {
    service: running.service,
    logger: silentLogger,
    credentials,
    maxCount: MAX_COUNT,
    observe,
    metrics: { contentType: 'text/plain', render: () => Promise.resolve('') },
    issuingGuards: guards,
  };
  const app = createApp(options);
  const fast = createFastPath({
    service: running.service,
    guards,
    maxCount: MAX_COUNT,
    logger: silentLogger,
    observe,
    shownTo: problemView(running.service),
  });
  const took: string[] = [];
  const server = createServer((req, res) => {
    if (withFastPath && fast(req, res)) took.push(`${req.method} ${req.url}`);
    else app(req, res);
  });
  return { server, took, observed };
}

async function listening(server: Server): Promise<number> {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return (server.address() as AddressInfo).port;
}

/** One request on a connection of its own, with the raw header lines as sent. */
function send(port: number, sample: Sample): Promise<Raw> {
  return new Promise((done, fail) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: sample.method,
        path: sample.path,
        headers: sample.headers ?? {},
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          done({ status: res.statusCode ?? 0, headers: res.rawHeaders, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', fail);
      },
    );
    req.on('error', fail);
    req.end(sample.body);
  });
}

/** The answer with its IDs masked and Date dropped, after checking Content-Length against its own body. */
function comparable(raw: Raw, head = false): { status: number; headers: string[]; body: string } {
  const headers: string[] = [];
  for (let i = 0; i < raw.headers.length; i += 2) {
    const [name, value] = [raw.headers[i]!, raw.headers[i + 1]!];
    if (name.toLowerCase() === 'date') continue;
    if (name.toLowerCase() === 'content-length') {
      // A HEAD answer's Content-Length is the GET body's, sent without it.
      if (!head) expect(Number(value)).toBe(Buffer.byteLength(raw.body));
      headers.push(name, '<length>');
      continue;
    }
    headers.push(name, value);
  }
  const body = raw.body
    .replace(/"(id|first|last)":"\d+"/g, '"$1":"<id>"')
    .replace(/"ids":\["\d+"(,"\d+")*\]/g, '"ids":[<ids>]')
    .replace(/^\d+$/gm, '<id>');
  return { status: raw.status, headers, body };
}

const SAMPLES: readonly Sample[] = [
  { what: 'next', method: 'GET', path: '/v1/sequences/default/next', fast: true, status: 200 },
  { what: 'ids, no count', method: 'POST', path: '/v1/sequences/default/ids', fast: true, status: 200 },
  { what: 'ids?count=1', method: 'POST', path: '/v1/sequences/default/ids?count=1', fast: true, status: 200 },
  { what: 'ids?count=7', method: 'POST', path: '/v1/sequences/default/ids?count=7', fast: true, status: 200 },
  {
    what: 'ids with Content-Length: 0',
    method: 'POST',
    path: '/v1/sequences/default/ids?count=2',
    headers: { 'content-length': '0' },
    fast: true,
    status: 200,
  },
  { what: 'opaque sequence, next', method: 'GET', path: '/v1/sequences/fp_opaque/next', fast: true, status: 200 },
  {
    what: 'opaque sequence, ids',
    method: 'POST',
    path: '/v1/sequences/fp_opaque/ids?count=3',
    fast: true,
    status: 200,
  },
  { what: 'count=0', method: 'POST', path: '/v1/sequences/default/ids?count=0', fast: true, status: 400 },
  {
    what: 'count above maxCount',
    method: 'POST',
    path: `/v1/sequences/default/ids?count=${MAX_COUNT + 1}`,
    fast: true,
    status: 400,
  },
  { what: 'count not a number', method: 'POST', path: '/v1/sequences/default/ids?count=abc', fast: false, status: 400 },
  {
    what: 'count of ten digits',
    method: 'POST',
    path: '/v1/sequences/default/ids?count=1000000000',
    fast: false,
    status: 400,
  },
  {
    what: 'count given twice',
    method: 'POST',
    path: '/v1/sequences/default/ids?count=1&count=2',
    fast: false,
    status: 400,
  },
  { what: 'negative count', method: 'POST', path: '/v1/sequences/default/ids?count=-1', fast: false, status: 400 },
  {
    what: 'unknown sequence, next',
    method: 'GET',
    path: '/v1/sequences/no_such_sequence/next',
    fast: true,
    status: 404,
  },
  {
    what: 'unknown sequence, ids',
    method: 'POST',
    path: '/v1/sequences/no_such_sequence/ids?count=2',
    fast: true,
    status: 404,
  },
  { what: 'invalid sequence name', method: 'GET', path: '/v1/sequences/Not-A-Name/next', fast: false, status: 400 },
  { what: 'bad percent-encoding', method: 'GET', path: '/v1/sequences/%ZZ/next', fast: false, status: 400 },
  { what: 'missing client token', method: 'GET', path: '/v1/sequences/guarded/next', fast: true, status: 401 },
  {
    what: 'wrong client token',
    method: 'GET',
    path: '/v1/sequences/guarded/next',
    headers: { authorization: `Bearer ${OTHER_TOKEN}` },
    fast: true,
    status: 403,
  },
  {
    what: 'malformed Authorization',
    method: 'POST',
    path: '/v1/sequences/guarded/ids?count=2',
    headers: { authorization: 'Basic abc' },
    fast: true,
    status: 401,
  },
  {
    what: 'right client token',
    method: 'GET',
    path: '/v1/sequences/guarded/next',
    headers: { authorization: `Bearer ${GUARDED_TOKEN}` },
    fast: true,
    status: 200,
  },
  {
    what: 'right client token, bad count',
    method: 'POST',
    path: '/v1/sequences/guarded/ids?count=0',
    headers: { authorization: `Bearer ${GUARDED_TOKEN}` },
    fast: true,
    status: 400,
  },
  {
    what: 'missing client token, bad count',
    method: 'POST',
    path: '/v1/sequences/guarded/ids?count=0',
    fast: true,
    status: 401,
  },
  { what: 'wrong method on next', method: 'PUT', path: '/v1/sequences/default/next', fast: false, status: 405 },
  { what: 'wrong method on ids', method: 'GET', path: '/v1/sequences/default/ids?count=1', fast: false, status: 405 },
  { what: 'DELETE on ids', method: 'DELETE', path: '/v1/sequences/default/ids', fast: false, status: 405 },
  { what: 'HEAD on next', method: 'HEAD', path: '/v1/sequences/default/next', fast: false, status: 200 },
  {
    what: 'Accept text/plain on ids',
    method: 'POST',
    path: '/v1/sequences/default/ids?count=3',
    headers: { accept: 'text/plain' },
    fast: false,
    status: 200,
  },
  {
    what: 'Accept text/plain;q=0 on ids',
    method: 'POST',
    path: '/v1/sequences/default/ids?count=3',
    headers: { accept: 'text/plain;q=0, application/json' },
    fast: false,
    status: 200,
  },
  {
    what: 'Accept image/png on ids',
    method: 'POST',
    path: '/v1/sequences/default/ids?count=3',
    headers: { accept: 'image/png' },
    fast: true,
    status: 200,
  },
  {
    what: 'Accept text/plain on next',
    method: 'GET',
    path: '/v1/sequences/default/next',
    headers: { accept: 'text/plain' },
    fast: true,
    status: 200,
  },
  {
    what: 'a body on ids',
    method: 'POST',
    path: '/v1/sequences/default/ids?count=2',
    headers: { 'content-type': 'application/json' },
    body: '{"x":1}',
    fast: false,
    status: 200,
  },
  {
    what: 'a body past the limit',
    method: 'POST',
    path: '/v1/sequences/default/ids?count=2',
    body: 'x'.repeat(17 * 1024),
    fast: false,
    status: 413,
  },
  { what: 'a query on next', method: 'GET', path: '/v1/sequences/default/next?count=3', fast: false, status: 200 },
  { what: 'a trailing slash', method: 'GET', path: '/v1/sequences/default/next/', fast: false, status: 200 },
  { what: 'a path of no route', method: 'GET', path: '/v1/sequences/default/nextt', fast: false, status: 404 },
];

describe('the fast path answers as the Express routes do', () => {
  let running: RunningTicketd;
  const servers: Server[] = [];

  beforeAll(async () => {
    running = await startInProcess(sharedBackends());
    expect([200, 201]).toContain(await putSequence(running.url, 'guarded', { blockSize: 100 }));
    expect([200, 201]).toContain(await putSequence(running.url, 'fp_opaque', { blockSize: 1000, ids: 'opaque' }));
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((done) => s.close(done))));
    await running.close();
  });

  it('every sample, success and each error a client can cause, byte for byte', async () => {
    const withFast = serve(running, true);
    const alone = serve(running, false);
    servers.push(withFast.server, alone.server);
    const [fastPort, expressPort] = [await listening(withFast.server), await listening(alone.server)];
    for (const sample of SAMPLES) {
      const tookBefore = withFast.took.length;
      const fromFast = await send(fastPort, sample);
      const fromExpress = await send(expressPort, sample);
      expect({ what: sample.what, status: fromFast.status }).toEqual({ what: sample.what, status: sample.status });
      expect({ what: sample.what, ...comparable(fromFast, sample.method === 'HEAD') }).toEqual({
        what: sample.what,
        ...comparable(fromExpress, sample.method === 'HEAD'),
      });
      expect({ what: sample.what, fast: withFast.took.length > tookBefore }).toEqual({
        what: sample.what,
        fast: sample.fast,
      });
    }
    expect(withFast.observed).toEqual(alone.observed);
    // The IDs themselves were issued on both sides, never twice.
    expect(withFast.took.length).toBe(SAMPLES.filter((s) => s.fast).length);
  });

  it('rate limited: the same 429 with Retry-After, from the same buckets as Express', async () => {
    const withFast = serve(running, true, 3);
    const alone = serve(running, false, 3);
    servers.push(withFast.server, alone.server);
    const [fastPort, expressPort] = [await listening(withFast.server), await listening(alone.server)];
    const sample: Sample = {
      what: 'rate limited',
      method: 'GET',
      path: '/v1/sequences/default/next',
      headers: { authorization: 'Bearer burst-token-000001' },
      fast: true,
      status: 429,
    };
    const answers = async (port: number): Promise<Raw[]> => {
      const out: Raw[] = [];
      for (let i = 0; i < 4; i++) out.push(await send(port, sample));
      return out;
    };
    const [fromFast, fromExpress] = [await answers(fastPort), await answers(expressPort)];
    expect(fromFast.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(fromFast.map((r) => comparable(r))).toEqual(fromExpress.map((r) => comparable(r)));
    expect(fromFast[3]!.headers).toContain('Retry-After');
    expect(withFast.took).toHaveLength(4);
    // A request that falls through to Express (HEAD) draws on the bucket the fast path drew on.
    const head = await send(fastPort, { ...sample, method: 'HEAD' });
    expect(comparable(head, true)).toEqual(comparable(await send(expressPort, { ...sample, method: 'HEAD' }), true));
    expect(head.status).toBe(429);
  });
});
