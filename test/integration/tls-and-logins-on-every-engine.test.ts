/**
 * TLS and logins as each engine serves them, on servers that refuse plaintext: MySQL with the
 * certificates it made itself (no host name in them), MariaDB with a CA made here (it makes none).
 * The documented URL serves IDs; the refusals name what works on that engine; and an account with a
 * password logs in for the first time after a restart (MySQL's caching_sha2_password then wants its
 * full authentication: over TLS, or over plaintext with the server's RSA key).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { backendOptionFile, startLocalServer, type LocalServer } from '../../src/launcher/local-mysql.js';
import { describeEachEngine } from '../support/engines.js';
import { makeCertificates, tlsServerArgs, type TestCertificates } from '../support/tls-certs.js';
import { postIds, runCliAsync, sqlOn, startInProcess } from '../support/ticketd.js';

describeEachEngine('TLS and logins', (engine) => {
  const mysqlEngine = engine.binary.flavor === 'mysql';
  let certs: TestCertificates;
  let dir: string;
  /** Refuses plaintext. */
  let strict: LocalServer;
  /** Takes plaintext, for the first plaintext login after a restart. */
  let open: LocalServer;
  let ca: string;

  beforeAll(async () => {
    certs = makeCertificates();
    dir = mkdtempSync(join(tmpdir(), 'ticketd-engine-tls-'));
    const tlsArgs = mysqlEngine ? ['--require-secure-transport=ON'] : tlsServerArgs(certs);
    [strict, open] = await Promise.all([
      startLocalServer({
        name: 'a',
        optionFile: backendOptionFile('a'),
        dir: join(dir, 'a'),
        binary: engine.binary,
        extraArgs: tlsArgs,
      }),
      startLocalServer({ name: 'b', optionFile: backendOptionFile('b'), dir: join(dir, 'b'), binary: engine.binary }),
    ]);
    ca = mysqlEngine ? join(strict.dir, 'data', 'ca.pem') : certs.ca;
    const account = [
      "CREATE USER 'tk'@'%' IDENTIFIED BY 'tk-pass'",
      "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER ON ticketd.* TO 'tk'@'%'",
    ];
    const root = await mysql.createConnection({
      host: '127.0.0.1',
      port: strict.port,
      user: 'root',
      ssl: { rejectUnauthorized: false },
    });
    for (const statement of account) await root.query(statement);
    await root.end();
    await sqlOn(open.url, ...account);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([strict?.stop(), open?.stop()]);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    certs?.dispose();
  });

  const url = (s: LocalServer, query: string): string =>
    `mysql://tk:tk-pass@127.0.0.1:${s.port}/ticketd${query === '' ? '' : `?${query}`}`;
  /** What the docs give for this engine: VERIFY_CA with MySQL's own ca.pem; VERIFY_IDENTITY with a certificate for the name. */
  const documented = (): string =>
    mysqlEngine ? `ssl-mode=VERIFY_CA&ssl-ca=${ca}` : `ssl-mode=VERIFY_IDENTITY&ssl-ca=${ca}`;

  it('serves IDs over the documented ssl-mode, and check reports the TLS version', async () => {
    const backends = url(strict, documented());
    expect((await runCliAsync(['init'], { TICKETD_BACKENDS: backends })).status).toBe(0);
    const check = await runCliAsync(['check'], { TICKETD_BACKENDS: backends });
    expect(check.stdout).toMatch(/^info: backend \S+: TLSv1\.[23] \(/m);
    expect(check.status).toBe(0);
    const running = await startInProcess(backends);
    try {
      expect(await postIds(running.url, 'default', 3)).toHaveLength(3);
    } finally {
      await running.close();
    }
  });

  it('refuses plaintext under require_secure_transport in one line naming what works on this engine', async () => {
    const plain = await runCliAsync(['check'], { TICKETD_BACKENDS: url(strict, 'ssl-mode=DISABLED') });
    expect(plain.status).toBe(1);
    const line = plain.stdout.split('\n').find((l) => l.startsWith('problem:')) ?? '';
    expect(line).toMatch(
      /the server requires TLS \(require_secure_transport=ON\) and ssl-mode=DISABLED did not use it/,
    );
    if (mysqlEngine) {
      expect(line).toMatch(/set ssl-mode=VERIFY_CA&ssl-ca=<the server's ca\.pem>.*name no host/);
    } else {
      expect(line).toMatch(/set ssl-mode=VERIFY_IDENTITY/);
    }
  });

  if (mysqlEngine) {
    it("says that MySQL's own certificate can never pass VERIFY_IDENTITY, and what to use instead", async () => {
      const identity = await runCliAsync(['check'], {
        TICKETD_BACKENDS: url(strict, `ssl-mode=VERIFY_IDENTITY&ssl-ca=${ca}`),
      });
      expect(identity.status).toBe(1);
      expect(identity.stdout).toMatch(
        /^problem: backend \S+: certificate is for CN=MySQL_Server_[\d.]+_Auto_Generated_Server_Certificate, not 127\.0\.0\.1 .*this is MySQL's own certificate, which names no host: use ssl-mode=VERIFY_CA/m,
      );
    });
  }

  it('logs in for the first time after a restart, over TLS and over plaintext (full authentication)', async () => {
    await Promise.all([strict.stop(), open.stop()]);
    await Promise.all([strict.restart(), open.restart()]);
    const overTls = await runCliAsync(['init'], { TICKETD_BACKENDS: url(strict, documented()) });
    expect(overTls.stderr).toBe('');
    const plaintext = await runCliAsync(['init'], { TICKETD_BACKENDS: url(open, 'ssl-mode=DISABLED') });
    expect(plaintext.stderr).toBe('');
    expect(plaintext.status).toBe(0);
    const running = await startInProcess(url(open, 'ssl-mode=DISABLED'));
    try {
      expect(await postIds(running.url, 'default', 2)).toHaveLength(2);
    } finally {
      await running.close();
    }
  });
});
