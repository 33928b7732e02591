import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/launcher/local-mysql.js';
import { composeCommand, containerRunning, dockerReady, image, requireDockerInCi, run } from '../support/docker.js';
import { IdLedger, sleep } from '../support/id-ledger.js';

/**
 * docker/compose.yml as the README gives it: `up --build`, IDs, `kill mysql-a`, more IDs (from B),
 * `start mysql-a`, until A serves again; no ID repeats, and `down -v` leaves nothing behind. Ports
 * are free ones, published on loopback as the file says; images are the official ones where they
 * can be pulled, docker/local-images.sh's stand-ins otherwise.
 */
requireDockerInCi('the compose demo');

const BLOCK_SIZE = 10_000n;
const INCREMENT = 16n;
const project = `ticketd-demo-test-${process.pid}`;

(dockerReady ? describe : describe.skip)('the compose demo on a Docker engine', () => {
  const compose = composeCommand();
  const env: NodeJS.ProcessEnv = { ...process.env };
  let url = '';
  const dc = (...args: string[]): string =>
    run(compose[0]!, [...compose.slice(1), '-p', project, '-f', 'docker/compose.yml', ...args], {
      env,
      timeoutMs: 600_000,
    });

  beforeAll(async () => {
    const [http, a, b] = [await freePort(), await freePort(), await freePort()];
    Object.assign(env, {
      TICKETD_MYSQL_IMAGE: image('TICKETD_MYSQL_IMAGE'),
      TICKETD_NODE_IMAGE: image('TICKETD_NODE_IMAGE'),
      TICKETD_HTTP_PORT: String(http),
      TICKETD_MYSQL_A_PORT: String(a),
      TICKETD_MYSQL_B_PORT: String(b),
    });
    url = `http://127.0.0.1:${http}`;
    const started = Date.now();
    dc('up', '--build', '-d');
    await waitFor(
      async () => (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) })).status === 200,
      60_000,
      'ticketd ready',
    );
    console.log(
      `compose demo on ${env.TICKETD_MYSQL_IMAGE}: ${compose.join(' ')} up --build took ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
  }, 660_000);

  afterAll(() => {
    dc('down', '-v', '--remove-orphans');
  }, 120_000);

  it('publishes every port on loopback only', () => {
    for (const service of ['ticketd', 'mysql-a', 'mysql-b']) {
      const published = dc('port', service, service === 'ticketd' ? '8080' : '3306').trim();
      expect(published).toMatch(/^127\.0\.0\.1:\d+$/);
    }
  });

  it('serves IDs, goes on from B with mysql-a killed, and uses A again once it is started', async () => {
    const ledger = new IdLedger();
    // Backend A's tickets are 1 mod 16, B's 2 mod 16 (sql/backend-*.cnf); each ticket is a block of 10,000 IDs.
    const highest = (offset: bigint): bigint => {
      let top = 0n;
      for (const id of ledger.ids()) {
        const ticket = BigInt(id) / BLOCK_SIZE;
        if (ticket % INCREMENT === offset && ticket > top) top = ticket;
      }
      return top;
    };
    for (let i = 0; i < 20; i++) expect(await ledger.request(url, 'before', 'default', 1000)).toBe(200);
    expect(highest(1n)).toBeGreaterThan(0n);

    dc('kill', 'mysql-a');
    expect(containerRunning(dc('ps', '-q', 'mysql-a').trim())).toBe(false);
    const bBefore = highest(2n);
    for (let i = 0; i < 30; i++) expect(await ledger.request(url, 'a-killed', 'default', 2000)).toBe(200);
    // Past the blocks cached before the kill, B's new tickets carried on.
    expect(highest(2n)).toBeGreaterThan(bBefore);

    const aBefore = highest(1n);
    dc('start', 'mysql-a');
    const restarted = Date.now();
    await waitFor(
      async () => {
        await ledger.request(url, 'a-back', 'default', 5000);
        return highest(1n) > aBefore;
      },
      90_000,
      'a new ticket of A',
    );
    console.log(
      `compose demo: ${ledger.unique} IDs, ${ledger.repeats.length} repeated; a new ticket of A ${((Date.now() - restarted) / 1000).toFixed(1)} s after start`,
    );
    expect(ledger.repeats).toEqual([]);
    expect(ledger.unique).toBe(ledger.acknowledged);
  }, 180_000);

  it('leaves no container or volume after down -v', () => {
    dc('down', '-v', '--remove-orphans');
    expect(run('docker', ['ps', '-a', '-q', '--filter', `label=com.docker.compose.project=${project}`]).trim()).toBe(
      '',
    );
    expect(
      run('docker', ['volume', 'ls', '-q', '--filter', `label=com.docker.compose.project=${project}`]).trim(),
    ).toBe('');
  }, 120_000);
});

/**
 * The compose demo with docker/compose.tls.yml over it, as docs/managed-mysql.md and the file's own
 * header give it: certificates from docker/make-certs.sh, MySQL servers that refuse plaintext,
 * ticketd verifying them (VERIFY_IDENTITY) and serving HTTPS; IDs over HTTPS with the demo CA, and
 * `ticketd check` in the container reports TLS to both backends. After the demo above, in this file,
 * so that its image build finds the layers the demo's left in the engine's cache.
 */
const tlsProject = `ticketd-tls-test-${process.pid}`;

(dockerReady ? describe : describe.skip)('the compose demo with TLS on a Docker engine', () => {
  const compose = composeCommand();
  const certs = mkdtempSync(join(tmpdir(), 'ticketd-compose-certs-'));
  const env: NodeJS.ProcessEnv = { ...process.env, TICKETD_CERTS_DIR: certs };
  let url = '';
  let agent: Agent;
  const dc = (...args: string[]): string =>
    run(
      compose[0]!,
      [...compose.slice(1), '-p', tlsProject, '-f', 'docker/compose.yml', '-f', 'docker/compose.tls.yml', ...args],
      { env, timeoutMs: 600_000 },
    );

  beforeAll(async () => {
    const made = spawnSync('bash', ['docker/make-certs.sh', certs], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`make-certs.sh failed: ${made.stderr}`);
    agent = new Agent({ keepAlive: true, ca: readFileSync(join(certs, 'ca.pem'), 'utf8') });
    const [http, a, b] = [await freePort(), await freePort(), await freePort()];
    // The MariaDB image here, the MySQL one in the plain demo: the compose path on both engines.
    Object.assign(env, {
      TICKETD_MYSQL_IMAGE: image('TICKETD_MARIADB_IMAGE'),
      TICKETD_NODE_IMAGE: image('TICKETD_NODE_IMAGE'),
      TICKETD_HTTP_PORT: String(http),
      TICKETD_MYSQL_A_PORT: String(a),
      TICKETD_MYSQL_B_PORT: String(b),
    });
    url = `https://localhost:${http}`;
    dc('up', '--build', '-d');
    for (let i = 0; i < 120; i++) {
      if ((await post('/readyz', 'GET').catch(() => ({ status: 0, body: '' }))).status === 200) return;
      await sleep(1000);
    }
    throw new Error(
      `ticketd did not become ready over HTTPS: ${dc('logs', '--tail', '20', 'ticketd', 'ticketd-init')}`,
    );
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
    console.log(
      `compose with TLS on ${env.TICKETD_MYSQL_IMAGE}: 5000 IDs over HTTPS, 0 repeated; check: ${check
        .split('\n')
        .filter((l) => l.startsWith('info:'))
        .join(' | ')}`,
    );
    expect(
      check.match(
        /^info: backend mysql:\/\/mysql-[ab]:3306\/ticketd: TLSv1\.[23] \(\S+\), ssl-mode=VERIFY_IDENTITY ssl-ca=\/certs\/ca\.pem$/gm,
      ),
    ).toHaveLength(2);
    // The servers themselves refuse plaintext: the same check with ssl-mode=DISABLED fails, saying why.
    const files = ['-p', tlsProject, '-f', 'docker/compose.yml', '-f', 'docker/compose.tls.yml'];
    const plain = spawnSync(
      compose[0]!,
      [
        ...compose.slice(1),
        ...files,
        'exec',
        '-T',
        '-e',
        'TICKETD_BACKEND_SSL_MODE=DISABLED',
        '-e',
        'TICKETD_BACKEND_SSL_CA=',
        'ticketd',
        'node',
        'dist/cli/main.js',
        'check',
      ],
      { encoding: 'utf8', env },
    );
    expect(plain.status).toBe(1);
    expect(plain.stdout).toMatch(
      /the server requires TLS \(require_secure_transport=ON\) and ssl-mode=DISABLED did not use it/,
    );
  }, 120_000);
});

async function waitFor(condition: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await condition().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(250);
  }
}
