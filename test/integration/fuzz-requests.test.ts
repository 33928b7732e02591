import { request, Agent } from 'node:http';
import { connect } from 'node:net';
import { sharedBackends, spawnTicketd, TEST_ADMIN_TOKEN, type ChildTicketd } from '../support/ticketd.js';

/** Requests sent through the HTTP client, and raw malformed ones written to a socket. */
const HTTP_REQUESTS = 10_000;
const RAW_REQUESTS = 300;
const CONCURRENCY = 16;
/** A request without an answer after this long counts as a hang. */
const HANG_MS = 5000;

/** mulberry32: a small seeded generator, so a failing run can be repeated from its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('fuzzing the HTTP API', () => {
  let ticketd: ChildTicketd;
  beforeAll(async () => {
    ticketd = await spawnTicketd(sharedBackends(), {
      TICKETD_CLIENT_TOKENS: `fuzz_guarded:${'g'.repeat(20)}`,
      TICKETD_RATE_LIMIT: '1000000',
    });
  });
  afterAll(async () => {
    await ticketd?.stop();
  });

  it(`answers ${HTTP_REQUESTS + RAW_REQUESTS} random and malformed requests with no 5xx, no crash and no hang, then still issues unique IDs`, async () => {
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
    const rnd = random(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)]!;
    const junk = (n: number): string =>
      Array.from({ length: n }, () => String.fromCharCode(Math.floor(rnd() * 0x2fff) + 1)).join('');
    const names = [
      'default',
      'fuzz_guarded',
      'no_such_seq',
      'Upper',
      'a'.repeat(49),
      '',
      '..',
      '%2e%2e',
      '%00',
      'x%2Fy',
      encodeURIComponent('ünïcode'),
      'a b',
      '😀',
      '1abc',
      'fuzz_a',
      '%ZZ',
    ];
    const paths = [
      (n: string) => `/v1/sequences/${n}/ids`,
      (n: string) => `/v1/sequences/${n}/next`,
      (n: string) => `/v1/sequences/${n}/blocks`,
      (n: string) => `/v1/sequences/${n}`,
      () => '/v1/sequences',
      () => '/healthz',
      () => '/readyz',
      () => '/metrics',
      () => '/',
      () => '/openapi.json',
      () => `/${encodeURIComponent(junk(20))}`,
      () => `/v1/${'a/'.repeat(200)}`,
      () => '/v1/sequences/default/ids/extra',
    ];
    const queries = [
      '',
      '?count=1',
      '?count=0',
      '?count=-1',
      '?count=10001',
      '?count=abc',
      '?count=1&count=2',
      '?count=1e3',
      `?count=${'9'.repeat(40)}`,
      '?count=%00',
      `?${junk(10)}`,
      '?count[]=1',
      '?__proto__=1',
    ];
    const methods = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'];
    const bodies = [
      '',
      '{}',
      '{"blockSize":10}',
      '{"blockSize":"abc"}',
      '{"blockSize":-1}',
      '{"blockSize":1,"maxId":"1"}',
      '{',
      'null',
      '[]',
      '"x"',
      '{"__proto__":{"blockSize":1}}',
      junk(50),
      'x'.repeat(20_000),
      `{"blockSize":${'9'.repeat(400)}}`,
    ];
    const auths = [
      undefined,
      undefined,
      `Bearer ${TEST_ADMIN_TOKEN}`,
      `Bearer ${'g'.repeat(20)}`,
      'Bearer',
      'Basic Zm9vOmJhcg==',
      `Bearer ${junk(30)}`,
    ];
    const accepts = [undefined, 'text/plain', 'application/json', '*/*', 'text/plain;q=0, application/json', junk(10)];
    const types = [undefined, 'application/json', 'text/plain', 'application/x-www-form-urlencoded', junk(8)];

    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const statuses = new Map<number, number>();
    const problems: string[] = [];
    const ids: string[] = [];
    const url = new URL(ticketd.url);
    let sent = 0;

    const one = (): Promise<void> =>
      new Promise((done) => {
        const method = pick(methods);
        let path = pick(paths)(pick(names)) + pick(queries);
        // Only PUTs with the admin token create sequences; keep those few and with known names.
        const auth = pick(auths);
        if (method === 'PUT' && auth?.includes(TEST_ADMIN_TOKEN) && rnd() < 0.9) path = '/v1/sequences/not%20valid';
        // An admin DELETE retires a sequence for good, on the pair every suite shares: only unknown names.
        if (method === 'DELETE' && auth?.includes(TEST_ADMIN_TOKEN)) path = '/v1/sequences/no_such_seq';
        const body = method === 'GET' || method === 'HEAD' ? '' : pick(bodies);
        const headers: Record<string, string> = {};
        if (auth !== undefined) headers.authorization = auth.replace(/[^\x20-\x7e]/g, '?');
        const accept = pick(accepts);
        if (accept !== undefined) headers.accept = accept.replace(/[^\x20-\x7e]/g, '?');
        const type = pick(types);
        if (type !== undefined) headers['content-type'] = type.replace(/[^\x20-\x7e]/g, '?');
        // The client refuses unescaped characters in a path; raw requests below send those.
        path = path.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
        const req = request(
          { host: url.hostname, port: url.port, method, path, headers, agent, timeout: HANG_MS },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const status = res.statusCode ?? 0;
              statuses.set(status, (statuses.get(status) ?? 0) + 1);
              const text = Buffer.concat(chunks).toString('utf8');
              if (status >= 500) problems.push(`${method} ${path} -> ${status} ${text.slice(0, 200)}`);
              // Every ID handed out during the fuzzing is kept, to check for duplicates at the end.
              if (status === 200 && method !== 'HEAD' && /\/(ids|next)/.test(path)) {
                if (res.headers['content-type']?.startsWith('text/plain'))
                  ids.push(...text.split('\n').filter((l) => l !== ''));
                else {
                  try {
                    const parsed = JSON.parse(text) as { ids?: string[]; id?: string };
                    ids.push(...(parsed.ids ?? (parsed.id === undefined ? [] : [parsed.id])));
                  } catch {
                    problems.push(`${method} ${path} -> 200 with a body that is not JSON: ${text.slice(0, 80)}`);
                  }
                }
              }
              done();
            });
          },
        );
        req.on('timeout', () => {
          problems.push(`${method} ${path}: no answer within ${HANG_MS} ms`);
          req.destroy();
        });
        req.on('error', (error) => {
          // Node's own parser may close on what it refuses; a reset is not a 5xx, but note hangs above.
          if (!String(error).includes('socket hang up') && !String(error).includes('ECONNRESET'))
            problems.push(`${method} ${path}: ${String(error)}`);
          done();
        });
        req.end(body);
      });

    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (sent < HTTP_REQUESTS) {
          sent++;
          await one();
        }
      }),
    );
    agent.destroy();

    // Raw bytes: broken request lines, bad lengths, binary, requests cut short.
    const raws = [
      () => 'GET / HTTP/1.1\r\n\r\n',
      () => `${junk(30)}\r\n\r\n`,
      () => 'POST /v1/sequences/default/ids HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"a"',
      () => 'POST /v1/sequences/default/ids HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n',
      () => 'POST /v1/sequences/default/ids HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      () => `GET /${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      () => `GET / HTTP/1.1\r\nHost: x\r\n${'X-A: b\r\n'.repeat(3000)}\r\n`,
      () => 'GET / HTTP/9.9\r\n\r\n',
      () => 'GET /v1/sequences/a b/next HTTP/1.1\r\nHost: x\r\n\r\n',
      () => `GET /v1/sequences/${junk(5)}/next HTTP/1.1\r\nHost: x\r\n\r\n`,
      () =>
        'PUT /v1/sequences/default HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{"a":',
      () => Buffer.from(Array.from({ length: 64 }, () => Math.floor(rnd() * 256))).toString('latin1'),
    ];
    for (let i = 0; i < RAW_REQUESTS; i++) {
      const payload = pick(raws)();
      const reply = await new Promise<string>((done) => {
        const socket = connect(Number(url.port), url.hostname);
        let data = '';
        socket.setTimeout(HANG_MS, () => {
          // A request cut short is waited on by the server (it expects the rest): end our side.
          socket.destroy();
          done(data);
        });
        socket.on('data', (c) => {
          data += c.toString('latin1');
          if (data.includes('\r\n\r\n')) socket.end();
        });
        socket.on('error', () => done(data));
        socket.on('close', () => done(data));
        socket.write(payload, 'latin1');
        // Half-close: a request that is incomplete gets an answer or a close, never a wait forever.
        socket.end();
      });
      if (/^HTTP\/1\.1 5/.test(reply))
        problems.push(`raw ${JSON.stringify(payload.slice(0, 60))} -> ${reply.split('\r\n')[0]}`);
    }

    console.log(
      `fuzz seed ${seed}: ${HTTP_REQUESTS} HTTP requests by status ${JSON.stringify(Object.fromEntries([...statuses].sort()))}, ${RAW_REQUESTS} raw`,
    );
    expect(problems).toEqual([]);
    expect(ticketd.process.exitCode).toBeNull();
    // No error-level log line at all (pino level 50 and up), whatever its wording.
    expect(ticketd.logs.filter((l) => (JSON.parse(l) as { level: number }).level >= 50)).toEqual([]);

    // Still serving, and nothing issued during the fuzzing or after it is a duplicate.
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${ticketd.url}/v1/sequences/default/ids?count=1000`, { method: 'POST' });
      expect(res.status).toBe(200);
      ids.push(...((await res.json()) as { ids: string[] }).ids);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });
});
