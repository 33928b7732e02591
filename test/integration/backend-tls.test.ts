/**
 * TLS to the backends against real MariaDB servers that refuse plaintext (require_secure_transport=ON),
 * with certificates made here by openssl: each ssl-mode verifies what it says, a refused handshake
 * is one line naming the setting, client certificates (REQUIRE SUBJECT) work, the ssl={json} form
 * with NODE_EXTRA_CA_CERTS, `check` reports the TLS version and cipher, ticketd serves IDs over it
 * and exports ticketd_backend_tls, and `migrate plan --source` reads a legacy table over TLS.
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import {
  backendOptionFile,
  findServerBinary,
  startLocalServer,
  type LocalServer,
} from '../../src/launcher/local-mysql.js';
import { makeCertificates, tlsServerArgs, type TestCertificates } from '../support/tls-certs.js';
import { sleep } from '../support/id-ledger.js';
import { metricSum, postIds, runCliAsync, startInProcess, TEST_ADMIN_TOKEN } from '../support/ticketd.js';

describe('TLS to the backends', () => {
  let certs: TestCertificates;
  let dir: string;
  /** Serves the certificate for 127.0.0.1; refuses plaintext. */
  let server: LocalServer;
  /** Serves a certificate of the same CA for other.example only. */
  let misnamed: LocalServer;

  beforeAll(async () => {
    certs = makeCertificates();
    dir = mkdtempSync(join(tmpdir(), 'ticketd-tls-'));
    const binary = findServerBinary(process.env.TICKETD_MYSQLD, process.env.PATH);
    [server, misnamed] = await Promise.all([
      startLocalServer({
        name: 'a',
        optionFile: backendOptionFile('a'),
        dir: join(dir, 'a'),
        binary,
        extraArgs: tlsServerArgs(certs),
      }),
      startLocalServer({
        name: 'b',
        optionFile: backendOptionFile('b'),
        dir: join(dir, 'b'),
        binary,
        extraArgs: tlsServerArgs(certs, certs.otherName),
      }),
    ]);
    // An account that must show the client certificate, over TCP from 127.0.0.1.
    const admin = await mysql.createConnection({
      host: '127.0.0.1',
      port: server.port,
      user: 'root',
      ssl: { ca: await readText(certs.ca) },
    });
    await admin.query(`CREATE USER 'mtls'@'%' REQUIRE SUBJECT '${certs.client.subject}'`);
    await admin.query("GRANT ALL PRIVILEGES ON *.* TO 'mtls'@'%'");
    await admin.query('CREATE DATABASE shop');
    await admin.query(
      'CREATE TABLE shop.orders (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, note VARCHAR(10))',
    );
    await admin.query("INSERT INTO shop.orders (note) VALUES ('a'), ('b'), ('c')");
    await admin.end();
  }, 120_000);

  afterAll(async () => {
    await Promise.all([server?.stop(), misnamed?.stop()]);
    rmSync(dir, { recursive: true, force: true });
    certs?.dispose();
  });

  const url = (s: LocalServer, query: string, user = 'root'): string =>
    `mysql://${user}@127.0.0.1:${s.port}/ticketd?${query}`;
  const oneLine = (text: string): string[] => text.split('\n').filter((l) => l !== '');

  it('serves IDs under VERIFY_IDENTITY; check reports the TLS version and cipher; the metric says TLS', async () => {
    const backends = url(server, `ssl-mode=VERIFY_IDENTITY&ssl-ca=${certs.ca}`);
    expect((await runCliAsync(['init'], { TICKETD_BACKENDS: backends })).status).toBe(0);
    const check = await runCliAsync(['check'], { TICKETD_BACKENDS: backends });
    expect(check.stdout).toMatch(
      /^info: backend mysql:\/\/127\.0\.0\.1:\d+\/ticketd: TLSv1\.[23] \([A-Z0-9_-]+\), ssl-mode=VERIFY_IDENTITY ssl-ca=\S+$/m,
    );
    expect(check.status).toBe(0);
    const running = await startInProcess(backends);
    try {
      expect(await postIds(running.url, 'default', 3)).toHaveLength(3);
      const text = await (await fetch(`${running.url}/metrics`)).text();
      expect(text).toMatch(/^ticketd_backend_tls\{backend="A"\} 1$/m);
      expect(text).not.toMatch(/^ticketd_backend_info/m);
      const admin = await fetch(`${running.url}/metrics`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
      expect(await admin.text()).toMatch(
        /^ticketd_backend_info\{backend="A",address="mysql:\/\/127\.0\.0\.1:\d+\/ticketd",identity="[0-9a-f-]+",tls_version="TLSv1\.[23]",tls_cipher="[A-Z0-9_-]+"\} 1$/m,
      );
    } finally {
      await running.close();
    }
  }, 60_000);

  it('refuses a certificate of an untrusted CA in one line naming ssl-ca', async () => {
    const check = await runCliAsync(['check'], {
      TICKETD_BACKENDS: url(server, `ssl-mode=VERIFY_CA&ssl-ca=${certs.otherCa}`),
    });
    expect(check.status).toBe(1);
    expect(oneLine(check.stdout)).toContainEqual(
      expect.stringMatching(
        /^problem: backend \S+: certificate not trusted \(ssl-ca=\S+other-ca\.pem\): self[- ]signed certificate in certificate chain$/,
      ),
    );
    const init = await runCliAsync(['init'], {
      TICKETD_BACKENDS: url(server, `ssl-mode=VERIFY_IDENTITY&ssl-ca=${certs.otherCa}`),
    });
    expect(init.status).toBe(1);
    expect(oneLine(init.stderr)).toEqual([
      expect.stringMatching(
        /^ticketd: init needs every backend: .*: certificate not trusted \(ssl-ca=\S+other-ca\.pem\): self[- ]signed certificate in certificate chain; .*\(TICKETD_BACKENDS_UNAVAILABLE\)$/,
      ),
    ]);
  }, 30_000);

  it('refuses a certificate for another name under VERIFY_IDENTITY, saying both names, and serves it under VERIFY_CA', async () => {
    const identity = await runCliAsync(['check'], {
      TICKETD_BACKENDS: url(misnamed, `ssl-mode=VERIFY_IDENTITY&ssl-ca=${certs.ca}`),
    });
    expect(identity.status).toBe(1);
    expect(identity.stdout).toMatch(
      /^problem: backend \S+: certificate is for DNS:other\.example, not 127\.0\.0\.1 \(ssl-mode=VERIFY_IDENTITY checks the name; VERIFY_CA checks the chain only\)$/m,
    );
    const chainOnly = url(misnamed, `ssl-mode=VERIFY_CA&ssl-ca=${certs.ca}`);
    expect((await runCliAsync(['init'], { TICKETD_BACKENDS: chainOnly })).status).toBe(0);
    expect((await runCliAsync(['check'], { TICKETD_BACKENDS: chainOnly })).stdout).toMatch(
      /^info: backend \S+: TLSv1\.[23] .*ssl-mode=VERIFY_CA/m,
    );
  }, 30_000);

  it('refuses DISABLED against a server that requires TLS, naming ssl-mode', async () => {
    const check = await runCliAsync(['check'], { TICKETD_BACKENDS: url(server, 'ssl-mode=disabled') });
    expect(check.status).toBe(1);
    expect(check.stdout).toMatch(
      /^problem: backend \S+: the server requires TLS \(require_secure_transport=ON\) and ssl-mode=DISABLED did not use it: set ssl-mode=VERIFY_IDENTITY .*TICKETD_BACKEND_SSL_MODE$/m,
    );
  }, 30_000);

  it('exits 2 on an unknown parameter, a bad mode or an unreadable file, in one line with the password masked', async () => {
    const cases: [string, RegExp][] = [
      [
        url(server, 'sslmode=require').replace('root@', 'root:hunter2@'),
        /^ticketd: TICKETD_BACKENDS: mysql:\/\/root:\*\*\*@127\.0\.0\.1:\d+\/ticketd\?sslmode=require: unknown parameter "sslmode"; allowed: ssl-mode, ssl-ca, ssl-cert, ssl-key, ssl, name \(TICKETD_CONFIG_INVALID\)$/,
      ],
      [
        url(server, 'ssl-mode=verify'),
        /ssl-mode must be one of DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY \(any case\); got "verify"/,
      ],
      [
        url(server, 'ssl-mode=VERIFY_CA&ssl-ca=/no/such/ca.pem'),
        /ssl-ca=\/no\/such\/ca\.pem cannot be read \(ENOENT\)/,
      ],
    ];
    for (const [backends, expected] of cases) {
      const run = await runCliAsync(['check'], { TICKETD_BACKENDS: backends });
      expect(run.status).toBe(2);
      expect(oneLine(run.stderr)).toEqual([expect.stringMatching(expected)]);
      expect(run.stderr).not.toContain('hunter2');
    }
    const defaults = await runCliAsync(['check'], {
      TICKETD_BACKENDS: url(server, ''),
      TICKETD_BACKEND_SSL_MODE: 'sometimes',
    });
    expect([defaults.status, oneLine(defaults.stderr)]).toEqual([
      2,
      [expect.stringMatching(/^ticketd: TICKETD_BACKEND_SSL_\*: TICKETD_BACKEND_SSL_MODE must be one of/)],
    ]);
  }, 30_000);

  it('logs in with a client certificate where the account requires one, and is refused without it', async () => {
    const without = await runCliAsync(['check'], {
      TICKETD_BACKENDS: url(server, `ssl-mode=VERIFY_IDENTITY&ssl-ca=${certs.ca}`, 'mtls'),
    });
    expect(without.status).toBe(1);
    expect(without.stdout).toMatch(/^problem: backend \S+ refused the connection: .*Access denied for user 'mtls'/m);
    const withCert = url(
      server,
      `ssl-mode=VERIFY_IDENTITY&ssl-ca=${certs.ca}&ssl-cert=${certs.client.cert}&ssl-key=${certs.client.key}`,
      'mtls',
    );
    const check = await runCliAsync(['check'], { TICKETD_BACKENDS: withCert });
    expect(check.stdout).toMatch(/^info: backend \S+: TLSv1\.[23] .*ssl-cert=/m);
    expect(check.status).toBe(0);
    // The same through TICKETD_BACKEND_SSL_* defaults, which a URL's own parameters override.
    const defaults = {
      TICKETD_BACKEND_SSL_MODE: 'VERIFY_IDENTITY',
      TICKETD_BACKEND_SSL_CA: certs.ca,
      TICKETD_BACKEND_SSL_CERT: certs.client.cert,
      TICKETD_BACKEND_SSL_KEY: certs.client.key,
    };
    expect(
      (await runCliAsync(['check'], { TICKETD_BACKENDS: `mysql://mtls@127.0.0.1:${server.port}/ticketd`, ...defaults }))
        .status,
    ).toBe(0);
    expect(
      (await runCliAsync(['check'], { TICKETD_BACKENDS: url(server, `ssl-ca=${certs.otherCa}`, 'mtls'), ...defaults }))
        .status,
    ).toBe(1);
  }, 30_000);

  it('reads a new client certificate on reload (SIGHUP), keeps the old one when the new file is not usable, and serves throughout', async () => {
    // The account requires the client certificate's subject; the file starts with another certificate of the same CA.
    const cert = join(dir, 'client.pem');
    const key = join(dir, 'client.key');
    copyFileSync(certs.rotated.cert, cert);
    copyFileSync(certs.rotated.key, key);
    const backends = url(server, `ssl-mode=VERIFY_IDENTITY&ssl-ca=${certs.ca}&ssl-cert=${cert}&ssl-key=${key}`, 'mtls');
    const running = await startInProcess(backends);
    try {
      expect((await fetch(`${running.url}/v1/sequences/default/ids?count=1`, { method: 'POST' })).status).toBe(503);
      copyFileSync(certs.client.cert, cert);
      copyFileSync(certs.client.key, key);
      expect(running.reload()).toBe('ok');
      let status = 0;
      for (let i = 0; i < 100 && status !== 200; i++) {
        status = (await fetch(`${running.url}/v1/sequences/default/ids?count=1`, { method: 'POST' })).status;
        if (status !== 200) await sleep(100);
      }
      expect(status).toBe(200);
      writeFileSync(cert, 'not a certificate\n');
      expect(running.reload()).toBe('error');
      expect(await metricSum(running.url, 'ticketd_config_reloads_total', { result: 'error' })).toBe(1);
      // New connections still log in with the certificate read before.
      await killClients(server);
      for (let i = 0; i < 20; i++)
        expect((await fetch(`${running.url}/v1/sequences/default/ids?count=1000`, { method: 'POST' })).status).toBe(
          200,
        );
    } finally {
      await running.close();
    }
  }, 60_000);

  it('takes the ssl={json} form, trusting the CA through NODE_EXTRA_CA_CERTS', async () => {
    const backends = url(server, `ssl=${encodeURIComponent('{"rejectUnauthorized":true}')}`);
    const trusted = await runCliAsync(['check'], { TICKETD_BACKENDS: backends, NODE_EXTRA_CA_CERTS: certs.ca });
    expect(trusted.stdout).toMatch(/^info: backend \S+: TLSv1\.[23] .*ssl=\{"rejectUnauthorized":true\}$/m);
    expect(trusted.status).toBe(0);
    const untrusted = await runCliAsync(['check'], { TICKETD_BACKENDS: backends });
    expect(untrusted.stdout).toMatch(
      /certificate not trusted \(the system's CA store and NODE_EXTRA_CA_CERTS \(no ssl-ca given\)\)/,
    );
  }, 30_000);

  it('plans a migration of a legacy table read over TLS', async () => {
    const backends = url(server, `ssl-mode=VERIFY_IDENTITY&ssl-ca=${certs.ca}`);
    const source = `mysql://root@127.0.0.1:${server.port}/shop?ssl-mode=VERIFY_IDENTITY&ssl-ca=${certs.ca}`;
    const plan = await runCliAsync(['migrate', 'plan', '--source', source, '--table', 'orders', '--json'], {
      TICKETD_BACKENDS: backends,
    });
    expect(plan.stderr).toBe('');
    expect(JSON.parse(plan.stdout)).toMatchObject({ table: 'orders', maxExisting: '33' });
    const refused = await runCliAsync(
      ['migrate', 'plan', '--source', source.replace(certs.ca, certs.otherCa), '--table', 'orders'],
      { TICKETD_BACKENDS: backends },
    );
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/certificate not trusted/);
  }, 30_000);

  it('connects in plaintext under the default PREFERRED to a server that offers no TLS, and check says so', async () => {
    const plain = await startLocalServer({
      name: 'plain',
      optionFile: backendOptionFile('a'),
      dir: join(dir, 'plain'),
      binary: findServerBinary(process.env.TICKETD_MYSQLD, process.env.PATH),
    });
    try {
      const backends = `mysql://root@127.0.0.1:${plain.port}/ticketd`;
      expect((await runCliAsync(['init'], { TICKETD_BACKENDS: backends })).status).toBe(0);
      const check = await runCliAsync(['check'], { TICKETD_BACKENDS: backends });
      expect(check.stdout).toMatch(/^info: backend \S+: plaintext, ssl-mode=PREFERRED$/m);
      expect(check.status).toBe(0);
      const required = await runCliAsync(['check'], { TICKETD_BACKENDS: `${backends}?ssl-mode=REQUIRED` });
      expect(required.stdout).toMatch(
        /^problem: backend \S+: the server offers no TLS, and ssl-mode=REQUIRED needs it/m,
      );
      const running = await startInProcess(backends);
      try {
        expect(await postIds(running.url, 'default', 2)).toHaveLength(2);
        expect(await (await fetch(`${running.url}/metrics`)).text()).toMatch(/^ticketd_backend_tls\{backend="A"\} 0$/m);
      } finally {
        await running.close();
      }
    } finally {
      await plain.stop();
    }
  }, 60_000);
});

async function readText(path: string): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  return readFile(path, 'utf8');
}

/** Ends every other connection to the server, so that ticketd must open new ones. */
async function killClients(server: LocalServer): Promise<void> {
  const conn = await mysql.createConnection({
    host: '127.0.0.1',
    port: server.port,
    user: 'root',
    ssl: { rejectUnauthorized: false },
  });
  try {
    const [rows] = await conn.query<mysql.RowDataPacket[]>(
      "SELECT id FROM information_schema.PROCESSLIST WHERE id <> CONNECTION_ID() AND command <> 'Daemon'",
    );
    for (const row of rows) await conn.query(`KILL ${Number(row.id)}`).catch(() => undefined);
  } finally {
    await conn.end();
  }
}
