import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/launcher/local-mysql.js';
import { composeCommand, dockerReady, image, requireDockerInCi, run } from '../support/docker.js';
import { sleep } from '../support/id-ledger.js';

/**
 * The compose demo with docker/compose.tls.yml over it, as docs/managed-mysql.md and the file's own
 * header give it: certificates from docker/make-certs.sh, MySQL servers that refuse plaintext,
 * ticketd verifying them (VERIFY_IDENTITY) and serving HTTPS; IDs over HTTPS with the demo CA, and
 * `ticketd check` in the container reports TLS to both backends.
 */
requireDockerInCi('the compose demo with TLS');

const project = `ticketd-tls-test-${process.pid}`;

(dockerReady ? describe : describe.skip)('the compose demo with TLS on a Docker engine', () => {
  const compose = composeCommand();
  const certs = mkdtempSync(join(tmpdir(), 'ticketd-compose-certs-'));
  const env: NodeJS.ProcessEnv = { ...process.env, TICKETD_CERTS_DIR: certs };
  let url = '';
  let agent: Agent;
  const dc = (...args: string[]): string => run(compose[0]!, [...compose.slice(1), '-p', project, '-f', 'docker/compose.yml', '-f', 'docker/compose.tls.yml', ...args], { env, timeoutMs: 600_000 });

  beforeAll(async () => {
    const made = spawnSync('bash', ['docker/make-certs.sh', certs], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`make-certs.sh failed: ${made.stderr}`);
    agent = new Agent({ keepAlive: true, ca: readFileSync(join(certs, 'ca.pem'), 'utf8') });
    const [http, a, b] = [await freePort(), await freePort(), await freePort()];
    Object.assign(env, { TICKETD_MYSQL_IMAGE: image('TICKETD_MYSQL_IMAGE'), TICKETD_NODE_IMAGE: image('TICKETD_NODE_IMAGE'), TICKETD_HTTP_PORT: String(http), TICKETD_MYSQL_A_PORT: String(a), TICKETD_MYSQL_B_PORT: String(b) });
    url = `https://localhost:${http}`;
    dc('up', '--build', '-d');
    for (let i = 0; i < 120; i++) {
      if ((await post('/readyz', 'GET').catch(() => ({ status: 0, body: '' }))).status === 200) return;
      await sleep(1000);
    }
    throw new Error(`ticketd did not become ready over HTTPS: ${dc('logs', '--tail', '20', 'ticketd', 'ticketd-init')}`);
  }, 660_000);

  afterAll(() => {
    dc('down', '-v', '--remove-orphans');
    agent?.destroy();
    rmSync(certs, { recursive: true, force: true });
  }, 120_000);

  function post(path: string, method = 'POST'): Promise<{ status: number; body: string }> {
    return new Promise((done, fail) => {
      const req = request(`${url}${path}`, { method, agent }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => done({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', fail);
      req.end();
    });
  }

  it('serves IDs over HTTPS from backends reached over verified TLS', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const answer = await post('/v1/sequences/default/ids?count=100');
      expect(answer.status).toBe(200);
      for (const id of (JSON.parse(answer.body) as { ids: string[] }).ids) ids.add(id);
    }
    expect(ids.size).toBe(5000);
    const check = dc('exec', '-T', 'ticketd', 'node', 'dist/cli/main.js', 'check');
    console.log(`compose with TLS: 5000 IDs over HTTPS, 0 repeated; check: ${check.split('\n').filter((l) => l.startsWith('info:')).join(' | ')}`);
    expect(check.match(/^info: backend mysql:\/\/mysql-[ab]:3306\/ticketd: TLSv1\.[23] \(\S+\), ssl-mode=VERIFY_IDENTITY ssl-ca=\/certs\/ca\.pem$/gm)).toHaveLength(2);
    // The servers themselves refuse plaintext: the same check with ssl-mode=DISABLED fails, saying why.
    const files = ['-p', project, '-f', 'docker/compose.yml', '-f', 'docker/compose.tls.yml'];
    const plain = spawnSync(compose[0]!, [...compose.slice(1), ...files, 'exec', '-T', '-e', 'TICKETD_BACKEND_SSL_MODE=DISABLED', '-e', 'TICKETD_BACKEND_SSL_CA=', 'ticketd', 'node', 'dist/cli/main.js', 'check'], { encoding: 'utf8', env });
    expect(plain.status).toBe(1);
    expect(plain.stdout).toMatch(/the server requires TLS \(require_secure_transport=ON\) and ssl-mode=DISABLED did not use it/);
  }, 120_000);
});
