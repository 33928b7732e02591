/**
 * HTTPS for clients, secrets from files, and rotation without a restart: `serve` with two worker
 * processes listens with TICKETD_TLS_CERT/KEY and reads its tokens and backends from TICKETD_*_FILE;
 * curl --cacert and the SDK (with `ca`) get IDs; a SIGHUP to the primary swaps the admin token and
 * the server certificate in every worker while a load runs, with no failed request; a file that
 * cannot be used keeps the old value and is counted as an error; client certificates are asked for
 * with TICKETD_TLS_CLIENT_CA.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { createTicketClient } from 'ticketd-client';
import { sleep } from '../support/id-ledger.js';
import { makeCertificates, type TestCertificates } from '../support/tls-certs.js';
import { runCli, sharedBackends, spawnTicketd, type ChildTicketd } from '../support/ticketd.js';

const OLD_TOKEN = 'admin-token-before-rotation-0123';
const NEW_TOKEN = 'admin-token-after-rotation-456789';
const CLIENT_TOKEN = 'client-token-from-a-file-0123456';
const ADMIN_ROUTE = '/v1/sequences/default/ids/1';

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly peer: PeerCertificate;
}

describe('HTTPS, secrets from files and rotation on SIGHUP', () => {
  let certs: TestCertificates;
  let ticketd: ChildTicketd;
  let base: string;
  let ca: string;
  const files = { cert: '', key: '', admin: '', clients: '', backends: '' };

  beforeAll(async () => {
    certs = makeCertificates();
    files.cert = join(certs.dir, 'serving.pem');
    files.key = join(certs.dir, 'serving.key');
    copyFileSync(certs.server.cert, files.cert);
    copyFileSync(certs.server.key, files.key);
    files.admin = join(certs.dir, 'admin-token');
    files.clients = join(certs.dir, 'client-tokens');
    files.backends = join(certs.dir, 'backends');
    writeFileSync(files.admin, `${OLD_TOKEN}\n`);
    writeFileSync(files.clients, `tls_only:${CLIENT_TOKEN}\n`);
    writeFileSync(files.backends, `${sharedBackends()}\n`);
    ca = readFileSync(certs.ca, 'utf8');
    ticketd = await spawnTicketd('', {
      TICKETD_ADMIN_TOKEN: '',
      TICKETD_BACKENDS_FILE: files.backends,
      TICKETD_ADMIN_TOKEN_FILE: files.admin,
      TICKETD_CLIENT_TOKENS_FILE: files.clients,
      TICKETD_TLS_CERT: files.cert,
      TICKETD_TLS_KEY: files.key,
      TICKETD_WORKERS: '2',
    });
    base = ticketd.url.replace('http://', 'https://');
    // Both workers listening: every request below may land on either.
    for (let i = 0; i < 100 && ticketd.logs.filter((l) => l.includes('ticketd listening')).length < 2; i++)
      await sleep(50);
  }, 60_000);

  afterAll(async () => {
    await ticketd?.stop();
    certs?.dispose();
  });

  /** One request on a new connection (so both workers answer in turn), trusting the test CA. */
  function call(path: string, options: { method?: string; token?: string; agent?: Agent } = {}): Promise<Answer> {
    return new Promise((done, fail) => {
      const req = request(
        `${base}${path}`,
        {
          method: options.method ?? 'GET',
          ca,
          ...(options.agent ? { agent: options.agent } : { agent: false }),
          headers: options.token === undefined ? {} : { authorization: `Bearer ${options.token}` },
        },
        (res) => {
          let body = '';
          // Read now: a connection of its own is gone by the end of the answer.
          const peer = (res.socket as TLSSocket).getPeerCertificate();
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => done({ status: res.statusCode ?? 0, body, peer }));
        },
      );
      req.on('error', fail);
      req.end();
    });
  }

  it('serves over HTTPS to curl --cacert and to the SDK with its ca option, and to nobody in plaintext', async () => {
    const curl = spawnSync(
      'curl',
      ['-sS', '--cacert', certs.ca, '-X', 'POST', `${base}/v1/sequences/default/ids?count=3`],
      { encoding: 'utf8' },
    );
    expect(curl.status).toBe(0);
    expect((JSON.parse(curl.stdout) as { ids: string[] }).ids).toHaveLength(3);
    const untrusted = spawnSync('curl', ['-sS', `${base}/healthz`], { encoding: 'utf8' });
    expect(untrusted.status).toBe(60);
    const plain = spawnSync('curl', ['-sS', '--max-time', '5', `${ticketd.url}/healthz`], { encoding: 'utf8' });
    expect(plain.status).not.toBe(0);
    const client = createTicketClient({ urls: [base], sequence: 'default', ca });
    try {
      const [a, b] = [await client.next(), await client.next()];
      expect(b).toBeGreaterThan(a);
    } finally {
      await client.close();
    }
    const refused = createTicketClient({ urls: [base], sequence: 'default' });
    await expect(refused.next()).rejects.toThrow(/fetch failed: unable to verify the first certificate/);
    await refused.close();
  }, 30_000);

  it('swaps the admin token and the certificate in every worker on SIGHUP while a load runs, with no failed request', async () => {
    // An admin route: decoding an ID is a 200 to an admin, a 403 to a wrong token.
    expect((await call(ADMIN_ROUTE, { token: OLD_TOKEN })).status).toBe(200);
    const agent = new Agent({ keepAlive: true, ca });
    const failures: string[] = [];
    let served = 0;
    let running = true;
    const loops = Array.from({ length: 4 }, async (_, n) => {
      while (running) {
        // Half the clients keep their connections, half open a new one each time (handshakes during the swap).
        const answer = await call('/v1/sequences/default/ids?count=5', {
          method: 'POST',
          ...(n % 2 === 0 && { agent }),
        }).catch((error: unknown) => ({ status: 0, body: String(error) }) as Answer);
        if (answer.status === 200) served++;
        else failures.push(`${answer.status} ${answer.body.slice(0, 120)}`);
      }
    });
    await sleep(500);
    writeFileSync(files.admin, `${NEW_TOKEN}\n`);
    copyFileSync(certs.rotated.cert, files.cert);
    copyFileSync(certs.rotated.key, files.key);
    ticketd.process.kill('SIGHUP');
    await sleep(1500);
    running = false;
    await Promise.all(loops);
    agent.destroy();
    console.log(`rotation under load: ${served} requests served, ${failures.length} failed`);
    expect(failures).toEqual([]);
    expect(served).toBeGreaterThan(50);
    // Every worker (new connections alternate between them) refuses the old token and takes the new one, with the new certificate.
    for (let i = 0; i < 6; i++) {
      const old = await call(ADMIN_ROUTE, { token: OLD_TOKEN });
      expect(old.status).toBe(403);
      expect(old.peer.subject.CN).toBe('localhost rotated');
      expect((await call(ADMIN_ROUTE, { token: NEW_TOKEN })).status).toBe(200);
    }
    const metrics = await call('/metrics');
    expect(metrics.body).toMatch(/^ticketd_config_reloads_total\{result="ok"\} 2$/m);
  }, 60_000);

  it('keeps what it had when a file cannot be used, in one error line per worker, and counts it', async () => {
    writeFileSync(files.admin, 'short\n');
    ticketd.process.kill('SIGHUP');
    await sleep(1000);
    for (let i = 0; i < 4; i++) expect((await call(ADMIN_ROUTE, { token: NEW_TOKEN })).status).toBe(200);
    expect((await call('/metrics')).body).toMatch(/^ticketd_config_reloads_total\{result="error"\} 2$/m);
    const errors = ticketd.logs.filter((l) => l.includes('reload kept the old value'));
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/TICKETD_ADMIN_TOKEN must be at least 16 characters/);
    writeFileSync(files.admin, `${NEW_TOKEN}\n`);
  }, 30_000);

  it('asks for a client certificate with TICKETD_TLS_CLIENT_CA: curl and the SDK need one', async () => {
    const mtls = await spawnTicketd(sharedBackends(), {
      TICKETD_TLS_CERT: certs.server.cert,
      TICKETD_TLS_KEY: certs.server.key,
      TICKETD_TLS_CLIENT_CA: certs.ca,
    });
    try {
      const url = mtls.url.replace('http://', 'https://');
      const without = spawnSync('curl', ['-sS', '--cacert', certs.ca, `${url}/healthz`], { encoding: 'utf8' });
      expect(without.status).not.toBe(0);
      const withCert = spawnSync(
        'curl',
        ['-sS', '--cacert', certs.ca, '--cert', certs.client.cert, '--key', certs.client.key, `${url}/healthz`],
        { encoding: 'utf8' },
      );
      expect([withCert.status, withCert.stdout]).toEqual([0, '{"status":"ok"}']);
      const client = createTicketClient({
        urls: [url],
        sequence: 'default',
        ca,
        cert: readFileSync(certs.client.cert, 'utf8'),
        key: readFileSync(certs.client.key, 'utf8'),
      });
      try {
        expect(typeof (await client.next())).toBe('bigint');
      } finally {
        await client.close();
      }
    } finally {
      await mtls.stop();
    }
  }, 30_000);

  it('refuses a secret given both inline and as a file, in one line naming both', () => {
    const run = runCli(['serve', '--port', '0'], {
      TICKETD_BACKENDS: sharedBackends(),
      TICKETD_ADMIN_TOKEN: OLD_TOKEN,
      TICKETD_ADMIN_TOKEN_FILE: files.admin,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(
      'ticketd: TICKETD_ADMIN_TOKEN and TICKETD_ADMIN_TOKEN_FILE are both set: give the value or the file, not both (TICKETD_CONFIG_INVALID)',
    );
  });
});
