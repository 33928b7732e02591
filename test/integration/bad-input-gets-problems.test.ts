import { connect } from 'node:net';
import { nextId, postIds, putSequence, useSharedServer, TEST_ADMIN_TOKEN } from '../support/ticketd.js';

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
}

async function problemOf(res: Response, status: number): Promise<Problem> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = (await res.json()) as Problem;
  expect(body.status).toBe(status);
  expect(typeof body.detail).toBe('string');
  return body;
}

describe('bad input', () => {
  const context = useSharedServer();

  it.each(['0', '-1', '10001', 'abc', '1.5', ''])('count=%s is a 400 naming count', async (count) => {
    const res = await fetch(`${context.server.url}/v1/sequences/default/ids?count=${count}`, { method: 'POST' });
    expect((await problemOf(res, 400)).detail).toMatch(/^count must be an integer from 1 to 10000/);
  });

  it('a repeated count is a 400', async () => {
    const res = await fetch(`${context.server.url}/v1/sequences/default/ids?count=1&count=2`, { method: 'POST' });
    await problemOf(res, 400);
  });

  it.each(['Bad', 'a;drop', 'a'.repeat(49), '%60x%60'])('sequence name %s is a 400', async (name) => {
    const res = await fetch(`${context.server.url}/v1/sequences/${name}/ids?count=1`, { method: 'POST' });
    expect((await problemOf(res, 400)).detail).toMatch(/does not match/);
  });

  it('a path with broken percent-encoding is a 400, not a 500 (found by the fuzz test)', async () => {
    const res = await fetch(`${context.server.url}/v1/sequences/%ZZ/next`);
    expect(await problemOf(res, 400)).toMatchObject({
      code: 'TICKETD_BAD_REQUEST',
      detail:
        'the path holds "%ZZ", which is not valid percent-encoding: each % must start a %XX escape of UTF-8 bytes',
    });
    const cut = await fetch(`${context.server.url}/v1/sequences/%E0%A4%A/next`);
    expect((await problemOf(cut, 400)).detail).toBe(
      'the path holds "%E0%A4%A", which is not valid percent-encoding: each % must start a %XX escape of UTF-8 bytes',
    );
  });

  it('an unknown sequence is a 404', async () => {
    const res = await fetch(`${context.server.url}/v1/sequences/no_such_sequence/next`);
    expect((await problemOf(res, 404)).code).toBe('TICKETD_SEQUENCE_NOT_FOUND');
  });

  it('an admin route without a token is a 401 with WWW-Authenticate; a wrong token is a 403', async () => {
    const put = (headers: Record<string, string>) =>
      fetch(`${context.server.url}/v1/sequences/needs_token`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{"blockSize":10}',
      });
    const missing = await put({});
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await problemOf(missing, 401)).code).toBe('TICKETD_UNAUTHORIZED');
    expect((await problemOf(await put({ authorization: 'Bearer wrong-token-wrong-token' }), 403)).code).toBe(
      'TICKETD_FORBIDDEN',
    );
    expect((await problemOf(await put({ authorization: `Basic ${TEST_ADMIN_TOKEN}` }), 401)).code).toBe(
      'TICKETD_UNAUTHORIZED',
    );
  });

  it('a malformed or oversized body is a 400/413, not a 500', async () => {
    const put = (body: string) =>
      fetch(`${context.server.url}/v1/sequences/bodies`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body,
      });
    expect((await problemOf(await put('{not json'), 400)).detail).toBe(
      'body is not valid JSON; send an object such as {"blockSize":100}',
    );
    await problemOf(await put('{"blockSize":'), 400);
    await problemOf(await put('"just a string"'), 400);
    await problemOf(await put('{"blockSize":1e400}'), 400);
    expect((await problemOf(await put('{"blockSize":1.5}'), 400)).detail).toBe(
      'blockSize must be an integer from 1 to 1000000000; got 1.5',
    );
    expect((await problemOf(await put(JSON.stringify({ blockSize: 1, pad: 'x'.repeat(64 * 1024) })), 413)).detail).toBe(
      'body is larger than 16 KiB',
    );
  });

  it('a body on a route that takes none is ignored when small and refused with 413 when over 16 KiB, like PUT', async () => {
    const post = (body: string) =>
      fetch(`${context.server.url}/v1/sequences/default/ids?count=2`, { method: 'POST', body });
    expect((await post('{}')).status).toBe(200);
    expect((await problemOf(await post('x'.repeat(5 * 1024 * 1024)), 413)).detail).toBe('body is larger than 16 KiB');
    // Sent in chunks, without a Content-Length, it is counted as it arrives.
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 40; i++) controller.enqueue(new Uint8Array(1024));
        controller.close();
      },
    });
    const res = await fetch(`${context.server.url}/v1/sequences/default/ids`, {
      method: 'POST',
      body: chunked,
      duplex: 'half',
    } as RequestInit);
    expect((await problemOf(res, 413)).code).toBe('TICKETD_BAD_REQUEST');
  });

  it('a URL too long for the HTTP parser is a 431 problem, not an empty answer', async () => {
    // A connection of its own, as curl would open: the parser refuses it before Express sees it.
    const reply = await new Promise<string>((done, fail) => {
      const socket = connect(context.server.port, '127.0.0.1');
      let data = '';
      socket.on('data', (c: Buffer) => (data += c.toString()));
      socket.on('error', fail);
      socket.on('close', () => done(data));
      socket.write(`GET /v1/sequences/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    });
    const [head, body] = reply.split('\r\n\r\n') as [string, string];
    expect(head).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\nContent-Type: application\/problem\+json/);
    expect(JSON.parse(body)).toMatchObject({
      status: 431,
      code: 'TICKETD_BAD_REQUEST',
      detail: expect.stringMatching(/larger than the server accepts/) as unknown,
    });
  });

  it('a known path with another method is a 405 with Allow; an unknown path is a 404', async () => {
    const res = await fetch(`${context.server.url}/v1/sequences/default/ids`);
    expect(res.headers.get('allow')).toBe('POST');
    await problemOf(res, 405);
    await problemOf(await fetch(`${context.server.url}/nope`), 404);
  });

  it('keeps serving unique IDs after all of that', async () => {
    const ids = await postIds(context.server.url, 'default', 100);
    expect(new Set(ids).size).toBe(100);
  });
});

describe('unknown sequence names', () => {
  const context = useSharedServer();

  it('a burst of requests for a name no backend has all get 404, and a PUT right after ends the 404 (the remembered miss is dropped)', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 50 }, () =>
        fetch(`${context.server.url}/v1/sequences/burst_unknown/next`).then((r) => r.status),
      ),
    );
    expect(new Set(statuses)).toEqual(new Set([404]));
    expect(await putSequence(context.server.url, 'burst_unknown', { blockSize: 10 })).toBe(201);
    expect(BigInt(await nextId(context.server.url, 'burst_unknown'))).toBeGreaterThanOrEqual(10n);
  });
});
