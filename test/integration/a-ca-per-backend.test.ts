/**
 * A CA per backend, on two Oracle MySQL servers that refuse plaintext and serve the certificates
 * each made itself: their CAs differ but share one subject name, as every auto-generated MySQL CA
 * does. One bundle of both CAs for both backends fails (OpenSSL picks the CA by subject, and the
 * first one with that name did not sign the other server's certificate), as the trial saw; each
 * backend's own `ssl-ca` in its URL verifies both (VERIFY_CA: the certificates carry no host
 * name) through one `serve`, and still does after a reload and fresh connections.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { backendOptionFile, startLocalServer, type LocalServer } from '../../src/launcher/local-mysql.js';
import { engineOf } from '../support/engines.js';
import { sleep } from '../support/id-ledger.js';
import { postIds, runCliAsync, startInProcess } from '../support/ticketd.js';

const mysqlEngine = engineOf('mysql');
const ci = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
if (mysqlEngine === undefined)
  console.log(
    `a CA per backend: no Oracle MySQL on this machine (TICKETD_MYSQL_ROOT); ${ci ? 'fails under CI' : 'skipped'}`,
  );
const run = mysqlEngine !== undefined || ci ? describe : describe.skip;

/** Ends every other connection to `s`, so that ticketd must open new ones (over TLS: plaintext is refused). */
async function killOthers(s: LocalServer): Promise<void> {
  const conn = await mysql.createConnection({
    host: '127.0.0.1',
    port: s.port,
    user: 'root',
    ssl: { rejectUnauthorized: false },
  });
  try {
    const [rows] = await conn.query<mysql.RowDataPacket[]>(
      "SELECT id FROM information_schema.processlist WHERE id <> CONNECTION_ID() AND user = 'root' AND command <> 'Daemon'",
    );
    for (const row of rows) await conn.query(`KILL ${Number(row.id)}`).catch(() => undefined);
  } finally {
    await conn.end();
  }
}

run('a CA per backend, on two MySQL servers whose own CAs share a subject', () => {
  let dir = '';
  let a: LocalServer;
  let b: LocalServer;
  const opened: LocalServer[] = [];
  const ca = (s: LocalServer): string => join(s.dir, 'data', 'ca.pem');

  beforeAll(async () => {
    expect(mysqlEngine).toBeDefined();
    dir = mkdtempSync(join(tmpdir(), 'ticketd-ca-per-backend-'));
    [a, b] = (await Promise.all(
      ['a', 'b'].map((name) =>
        startLocalServer({
          name,
          optionFile: backendOptionFile(name),
          dir: join(dir, name),
          binary: mysqlEngine!.binary,
          extraArgs: ['--require-secure-transport=ON'],
        }),
      ),
    )) as [LocalServer, LocalServer];
    opened.push(a, b);
  }, 180_000);
  afterAll(async () => {
    await Promise.all(opened.map((s) => s.stop()));
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  const url = (s: LocalServer, query: string): string => `mysql://root@127.0.0.1:${s.port}/ticketd?${query}`;

  it('made two CAs of one subject name, each signing only its own server', () => {
    const [caA, caB] = [ca(a), ca(b)].map((path) => new X509Certificate(readFileSync(path)));
    expect(caA!.subject).toBe(caB!.subject);
    expect(caA!.fingerprint256).not.toBe(caB!.fingerprint256);
    const certB = new X509Certificate(readFileSync(join(b.dir, 'data', 'server-cert.pem')));
    expect(certB.verify(caB!.publicKey)).toBe(true);
    expect(certB.verify(caA!.publicKey)).toBe(false);
  });

  it('fails with one bundle of both CAs for both backends', async () => {
    const bundle = join(dir, 'bundle.pem');
    writeFileSync(bundle, readFileSync(ca(a), 'utf8') + readFileSync(ca(b), 'utf8'));
    const check = await runCliAsync(['check'], {
      TICKETD_BACKENDS: [a, b].map((s) => url(s, 'ssl-mode=VERIFY_CA')).join(','),
      TICKETD_BACKEND_SSL_CA: bundle,
    });
    expect(check.status).toBe(1);
    // One of the two is refused for its certificate; which one depends on the order of the bundle.
    expect(check.stdout).toMatch(/^problem: backend mysql:\/\/127\.0\.0\.1:\d+\/ticketd: certificate not trusted/m);
  }, 60_000);

  it("verifies each backend with its own URL's ssl-ca, through check, init and one serve, across a reload", async () => {
    const backends = [a, b].map((s) => url(s, `ssl-mode=VERIFY_CA&ssl-ca=${ca(s)}`)).join(',');
    // The CAs swapped: each backend refuses the other's, so each CA is used for its own backend only.
    const swapped = [a, b].map((s, i) => url(s, `ssl-mode=VERIFY_CA&ssl-ca=${ca([b, a][i]!)}`)).join(',');
    const wrong = await runCliAsync(['check'], { TICKETD_BACKENDS: swapped });
    expect(wrong.status).toBe(1);
    expect(wrong.stdout.match(/certificate not trusted/g)).toHaveLength(2);

    expect((await runCliAsync(['init'], { TICKETD_BACKENDS: backends })).status).toBe(0);
    const check = await runCliAsync(['check'], { TICKETD_BACKENDS: backends });
    expect(check.stdout.match(/^info: backend \S+: TLSv1\.[23] \(/gm)).toHaveLength(2);
    expect(check.status).toBe(0);

    const running = await startInProcess(backends);
    try {
      const tickets = (): number[] => running.service.backendStatus().map((s) => s.stats.tickets);
      /** Asks for IDs until both backends gave tickets past `from` and both are up over TLS again; every ID once. */
      const bothServe = async (from: number[]): Promise<void> => {
        const seen = new Set<string>();
        // Bounded by time, not by rounds: a backend whose connections were killed is used again once
        // its breaker's recheck (every 2 s) finds it well, however fast the other serves meanwhile.
        const deadline = Date.now() + 20_000;
        while (Date.now() < deadline) {
          for (const id of await postIds(running.url, 'default', 10_000)) {
            expect(seen.has(id)).toBe(false);
            seen.add(id);
          }
          const status = running.service.backendStatus();
          const done =
            tickets().every((t, i) => t > from[i]!) &&
            status.every((s) => s.state === 'up' && s.transport?.tls === true);
          if (done) return;
          await sleep(100);
        }
        expect(running.service.backendStatus().map((s) => [s.state, s.transport?.tls, s.stats.tickets])).toEqual([
          ['up', true, expect.any(Number)],
          ['up', true, expect.any(Number)],
        ]);
        expect(tickets().map((t, i) => t > from[i]!)).toEqual([true, true]);
      };
      await bothServe([0, 0]);
      // A reload reads each backend's CA again; the connections after it are new ones and use it.
      expect(running.reload()).toBe('ok');
      await Promise.all([a, b].map(killOthers));
      await bothServe(tickets());
    } finally {
      await running.close();
    }
  }, 120_000);
});
