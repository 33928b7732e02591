/**
 * Strangers learn nothing of where the backends are: against two servers over TLS whose host,
 * ports, account, password, database, server identities, TLS version and cipher and CA file are
 * known strings, every operation /openapi.json lists (every method, with names that exist and
 * names that do not), the status page and /metrics are asked without the admin token, with both
 * backends up and with B killed, and no answer may hold any of those strings. The same walk with
 * the admin token reads the addresses, identities and TLS details.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { backendOptionFile, startLocalServer, type LocalServer } from '../../src/launcher/local-mysql.js';
import type { RunningTicketd } from '../../src/server.js';
import { describeEachEngine } from '../support/engines.js';
import { makeCertificates, tlsServerArgs, type TestCertificates } from '../support/tls-certs.js';
import { postIds, putSequence, runCliAsync, startInProcess, TEST_ADMIN_TOKEN } from '../support/ticketd.js';
import { putPool } from '../support/worker-pools.js';

const USER = 'tk_secret_user';
const PASSWORD = 'Pw-secret-4711';
const DATABASE = 'tk_secret_db';
const POOL = 'walked_pool';
/** Longer than any backend timeout: an answer that takes longer is a hang, reported as such. */
const ANSWER_WITHIN_MS = 30_000;

/** What each operation's path parameters are filled with: names that exist, then names that do not. */
function fills(issued: string): Record<string, string>[] {
  return [
    { name: 'visible', id: issued, worker: '0' },
    { name: 'missing_one', id: '12345', worker: '7' },
  ];
}

describeEachEngine('strangers learn nothing of the backends', (engine) => {
  const mysqlEngine = engine.binary.flavor === 'mysql';
  let certs: TestCertificates;
  let dir = '';
  const servers: LocalServer[] = [];
  let running: RunningTicketd | undefined;
  let issued = '';
  /** Every string that tells where a backend is or who ticketd is on it. */
  const secrets: string[] = [];
  /** The strings the admin reads: each backend's address, identity, TLS version and cipher. */
  const adminReads: string[] = [];

  const caOf = (s: LocalServer): string => (mysqlEngine ? join(s.dir, 'data', 'ca.pem') : certs.ca);

  beforeAll(async () => {
    certs = makeCertificates();
    dir = mkdtempSync(join(tmpdir(), 'ticketd-strangers-'));
    for (const name of ['a', 'b'])
      servers.push(
        await startLocalServer({
          name,
          optionFile: backendOptionFile(name),
          dir: join(dir, name),
          binary: engine.binary,
          extraArgs: mysqlEngine ? ['--require-secure-transport=ON'] : tlsServerArgs(certs),
        }),
      );
    for (const s of servers) {
      const root = await mysql.createConnection({
        host: '127.0.0.1',
        port: s.port,
        user: 'root',
        ssl: { rejectUnauthorized: false },
      });
      await root.query(`CREATE DATABASE ${DATABASE}`);
      await root.query(`CREATE USER '${USER}'@'%' IDENTIFIED BY '${PASSWORD}'`);
      await root.query(`GRANT ALL PRIVILEGES ON *.* TO '${USER}'@'%'`);
      await root.end();
    }
    const backends = servers
      .map(
        (s) =>
          `mysql://${USER}:${PASSWORD}@127.0.0.1:${s.port}/${DATABASE}?ssl-mode=${mysqlEngine ? 'VERIFY_CA' : 'VERIFY_IDENTITY'}&ssl-ca=${caOf(s)}`,
      )
      .join(',');
    const init = await runCliAsync(['init'], { TICKETD_BACKENDS: backends });
    expect([init.status, init.stderr]).toEqual([0, '']);
    running = await startInProcess(backends);
    expect(await putSequence(running.url, 'visible', { blockSize: 1 })).toBe(201);
    expect(await putSequence(running.url, 'sealed', { blockSize: 10_000, ids: 'opaque' })).toBe(201);
    expect((await putPool(running.url, POOL, { workerBits: 3 })).status).toBe(201);
    issued = (await postIds(running.url, 'visible', 4))[0]!;
    const ready = (await (await admin('/readyz')).json()) as {
      backends: { backend: string; identity: string; transport: { tls: boolean; version: string; cipher: string } }[];
    };
    // The setup is what the test says: TLS to both, each with an identity.
    expect(ready.backends.map((b) => b.transport.tls)).toEqual([true, true]);
    for (const b of ready.backends) adminReads.push(b.backend, b.identity, b.transport.version, b.transport.cipher);
    secrets.push(...adminReads, USER, PASSWORD, DATABASE, '127.0.0.1', dir, certs.dir, ...servers.map((s) => caOf(s)));
  }, 240_000);
  afterAll(async () => {
    await running?.close();
    await Promise.all(servers.map((s) => s.stop()));
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
    certs.dispose();
  });

  function admin(path: string): Promise<Response> {
    return fetch(`${running!.url}${path}`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
  }

  /** The leaks in one answer: a secret string, or a backend's port as a number of its own. */
  function leaks(text: string): string[] {
    const ports = servers.map((s) => String(s.port)).filter((p) => new RegExp(`(?<![\\d])${p}(?![\\d])`).test(text));
    return [...secrets.filter((s) => text.includes(s)), ...ports];
  }

  /** Asks every operation of the document, and the status page and /metrics, as `auth` (none: a stranger). */
  async function walk(auth: string | undefined): Promise<{ asked: string; status: number; text: string }[]> {
    const document = (await (await fetch(`${running!.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const answers: { asked: string; status: number; text: string }[] = [];
    for (const [template, item] of Object.entries(document.paths))
      for (const method of Object.keys(item).map((m) => m.toUpperCase()))
        for (const fill of fills(issued)) {
          const path = template.replace(/\{(\w+)\}/g, (_, p: string) =>
            p === 'name' && template.startsWith('/v1/worker-pools') && fill.name === 'visible' ? POOL : fill[p]!,
          );
          // Anything that would change the fleet is asked as a stranger only.
          if (auth !== undefined && method !== 'GET') continue;
          const body = template.includes('/leases')
            ? '{"holder":"walker"}'
            : method === 'PUT'
              ? '{"blockSize":1,"workerBits":3}'
              : '{}';
          const started = Date.now();
          const res = await fetch(`${running!.url}${path}${template.endsWith('/ids') ? '?count=2' : ''}`, {
            method,
            headers: {
              'content-type': 'application/json',
              ...(auth === undefined ? {} : { authorization: `Bearer ${auth}` }),
            },
            ...(method === 'GET' ? {} : { body }),
            signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
          }).catch((error: unknown) => {
            throw new Error(`${method} ${path} did not answer within ${Date.now() - started} ms`, { cause: error });
          });
          answers.push({ asked: `${method} ${path}`, status: res.status, text: await res.text() });
        }
    return answers;
  }

  it('walks every operation as a stranger with both backends up: no answer tells where a backend is', async () => {
    const answers = await walk(undefined);
    expect(answers.length).toBeGreaterThan(40);
    expect(answers.filter((a) => a.asked === 'GET /readyz')[0]!.status).toBe(200);
    expect(answers.map((a) => [a.asked, leaks(a.text)]).filter(([, l]) => l!.length > 0)).toEqual([]);
    // What a stranger does see: the backends by name.
    const ready = JSON.parse(answers.find((a) => a.asked === 'GET /readyz')!.text) as { backends: object[] };
    expect(ready.backends).toEqual([
      expect.objectContaining({ backend: 'A', name: 'A' }),
      expect.objectContaining({ backend: 'B', name: 'B' }),
    ]);
    const metrics = answers.find((a) => a.asked === 'GET /metrics')!.text;
    expect(metrics).toMatch(/^ticketd_backend_tls\{backend="B"\} 1$/m);
  }, 120_000);

  it('reads the addresses, identities and TLS details with the admin token', async () => {
    const answers = await walk(TEST_ADMIN_TOKEN);
    const all = answers.map((a) => a.text).join('\n');
    expect(adminReads.filter((s) => !all.includes(s))).toEqual([]);
    expect(all).toMatch(/^ticketd_backend_info\{backend="A",address="mysql:\/\/127\.0\.0\.1:\d+\/tk_secret_db"/m);
    // Never the password, to anyone.
    expect(all).not.toContain(PASSWORD);
  }, 120_000);

  it('walks every operation as a stranger with B killed: the errors tell nothing either', async () => {
    servers[1]!.signal('SIGKILL');
    await servers[1]!.exited();
    expect(servers[1]!.pid).toBeUndefined();
    // Refills that turn to B (default's blocks are 10,000), so that its failure is seen; then the walk.
    for (let i = 0; i < 4; i++)
      await fetch(`${running!.url}/v1/sequences/default/ids?count=10000`, {
        method: 'POST',
        signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
      });
    const adminReady = (await (await admin('/readyz')).json()) as { backends: { state: string; lastError?: string }[] };
    expect(adminReady.backends[1]!.state).not.toBe('up');
    const answers = await walk(undefined);
    expect(answers.map((a) => [a.asked, leaks(a.text)]).filter(([, l]) => l!.length > 0)).toEqual([]);
  }, 300_000);
});
