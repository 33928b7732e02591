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
  const dc = (...args: string[]): string => run(compose[0]!, [...compose.slice(1), '-p', project, '-f', 'docker/compose.yml', ...args], { env, timeoutMs: 600_000 });

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
    await waitFor(async () => (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) })).status === 200, 60_000, 'ticketd ready');
    console.log(`compose demo: ${compose.join(' ')} up --build took ${((Date.now() - started) / 1000).toFixed(0)} s`);
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
    await waitFor(async () => {
      await ledger.request(url, 'a-back', 'default', 5000);
      return highest(1n) > aBefore;
    }, 90_000, 'a new ticket of A');
    console.log(`compose demo: ${ledger.unique} IDs, ${ledger.repeats.length} repeated; a new ticket of A ${((Date.now() - restarted) / 1000).toFixed(1)} s after start`);
    expect(ledger.repeats).toEqual([]);
    expect(ledger.unique).toBe(ledger.acknowledged);
  }, 180_000);

  it('leaves no container or volume after down -v', () => {
    dc('down', '-v', '--remove-orphans');
    expect(run('docker', ['ps', '-a', '-q', '--filter', `label=com.docker.compose.project=${project}`]).trim()).toBe('');
    expect(run('docker', ['volume', 'ls', '-q', '--filter', `label=com.docker.compose.project=${project}`]).trim()).toBe('');
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
