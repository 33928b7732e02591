/**
 * docker/Dockerfile as the production image: it builds on the engine the suite found, holds only
 * node, its libraries and the installed tarball (no shell), carries its OCI labels, runs as uid
 * 10001 on a read-only root file system with no capabilities, and reports healthy (Docker's own
 * health status) both over HTTP and over HTTPS against real launcher backends, reached on loopback
 * through host networking. It serves IDs, and stops with exit 0 on `docker stop` (its drain).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join, resolve } from 'node:path';
import { freePort } from '../../src/launcher/local-mysql.js';
import { dockerReady, image, requireDockerInCi, run } from '../support/docker.js';
import { runAsync } from '../support/packed-release.js';
import { postIds, startPrivatePair, TEST_ADMIN_TOKEN } from '../support/ticketd.js';
import { makeCertificates, type TestCertificates } from '../support/tls-certs.js';

requireDockerInCi('the production image');
if (!dockerReady)
  console.log(`production image: not built or run: ${process.env.TICKETD_TEST_DOCKER ?? 'Docker was not settled'}`);

const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
const tag = `ticketd-test/production:${process.pid}`;

/** Polls a container's health status until it is `healthy` (or fails at `unhealthy` or after 60 s); the seconds it took. */
async function healthy(container: string): Promise<number> {
  const started = Date.now();
  for (;;) {
    const status = run('docker', ['inspect', '-f', '{{.State.Health.Status}}', container]).trim();
    if (status === 'healthy') return (Date.now() - started) / 1000;
    if (status === 'unhealthy' || Date.now() - started > 60_000) {
      throw new Error(
        `${container} is ${status}: ${run('docker', ['inspect', '-f', '{{json .State.Health.Log}}', container])} ${run('docker', ['logs', container]).slice(-1500)}`,
      );
    }
    await new Promise((done) => setTimeout(done, 500));
  }
}

/** POST ids over HTTPS, trusting only the test CA. */
function postIdsOverHttps(port: number, ca: string): Promise<string[]> {
  return new Promise((done, fail) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/v1/sequences/default/ids?count=3', ca: readFileSync(ca) },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () =>
          res.statusCode === 200
            ? done((JSON.parse(body) as { ids: string[] }).ids)
            : fail(new Error(`${res.statusCode} ${body}`)),
        );
      },
    );
    req.on('error', fail);
    req.end();
  });
}

(dockerReady ? describe : describe.skip)('the production image on a Docker engine', () => {
  let pair: Awaited<ReturnType<typeof startPrivatePair>> | undefined;
  let certs: TestCertificates | undefined;
  const containers: string[] = [];

  beforeAll(async () => {
    const revision = spawnSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).stdout.trim() || 'unknown';
    const started = Date.now();
    const built = await runAsync(
      'docker',
      [
        'build',
        '-q',
        '-f',
        'docker/Dockerfile',
        '--build-arg',
        `NODE_IMAGE=${image('TICKETD_NODE_IMAGE')}`,
        '--build-arg',
        `VERSION=${version}`,
        '--build-arg',
        `REVISION=${revision}`,
        '--build-arg',
        'SOURCE=file://ticketd',
        '-t',
        tag,
        '.',
      ],
      resolve('.'),
      process.env,
      900_000,
    );
    if (built.status !== 0) throw new Error(`docker build exited with ${built.status}: ${built.stderr.slice(-3000)}`);
    console.log(`production image: built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    pair = await startPrivatePair();
    certs = makeCertificates();
    // The container's user (10001) reads the test's certificates through a bind mount.
    chmodSync(certs.dir, 0o755);
    for (const file of readdirSync(certs.dir)) chmodSync(join(certs.dir, file), 0o644);
  }, 960_000);

  afterAll(async () => {
    for (const c of containers) spawnSync('docker', ['rm', '-f', c], { encoding: 'utf8' });
    spawnSync('docker', ['rmi', '-f', tag], { encoding: 'utf8' });
    certs?.dispose();
    await pair?.dispose();
  });

  it('is small, labelled, and holds no shell: node, its libraries and the installed package only', () => {
    const [size, user, labels] = run('docker', [
      'image',
      'inspect',
      '-f',
      '{{.Size}}|{{.Config.User}}|{{json .Config.Labels}}',
      tag,
    ])
      .trim()
      .split('|') as [string, string, string];
    console.log(
      `production image: ${(Number(size) / 1e6).toFixed(0)} MB (docker/Dockerfile before this image: 313 MB)`,
    );
    expect(Number(size)).toBeLessThan(200e6);
    expect(user).toBe('10001:10001');
    const parsed = JSON.parse(labels) as Record<string, string>;
    expect(parsed['org.opencontainers.image.version']).toBe(version);
    expect(parsed['org.opencontainers.image.licenses']).toBe('MIT');
    expect(parsed['org.opencontainers.image.revision']).toMatch(/^[0-9a-f]{40}$|^unknown$/);
    expect(parsed['org.opencontainers.image.source']).toBe('file://ticketd');
    expect(run('docker', ['run', '--rm', tag, '--version']).trim()).toBe(version);
    const shell = spawnSync('docker', ['run', '--rm', '--entrypoint', '/bin/sh', tag, '-c', 'true'], {
      encoding: 'utf8',
    });
    expect(shell.status).not.toBe(0);
    const npm = spawnSync('docker', ['run', '--rm', '--entrypoint', 'npm', tag, '--version'], { encoding: 'utf8' });
    expect(npm.status).not.toBe(0);
  });

  it('is healthy over HTTP and over HTTPS, as uid 10001 on a read-only root with no capabilities, serves IDs and drains on docker stop', async () => {
    const hardened = ['--network', 'host', '--read-only', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges'];
    const common = ['-e', `TICKETD_BACKENDS=${pair!.backendsUrl}`, '-e', `TICKETD_ADMIN_TOKEN=${TEST_ADMIN_TOKEN}`];
    const httpPort = await freePort();
    const httpsPort = await freePort();
    const http = run('docker', ['run', '-d', ...hardened, ...common, '-e', `TICKETD_PORT=${httpPort}`, tag]).trim();
    containers.push(http);
    const https = run('docker', [
      'run',
      '-d',
      ...hardened,
      ...common,
      '-e',
      `TICKETD_PORT=${httpsPort}`,
      '-v',
      `${certs!.dir}:/certs:ro`,
      '-e',
      'TICKETD_TLS_CERT=/certs/server.pem',
      '-e',
      'TICKETD_TLS_KEY=/certs/server.key',
      tag,
    ]).trim();
    containers.push(https);

    const httpSeconds = await healthy(http);
    const httpsSeconds = await healthy(https);
    console.log(
      `production image: healthy over HTTP after ${httpSeconds.toFixed(1)} s, over HTTPS after ${httpsSeconds.toFixed(1)} s`,
    );
    // The scheme matters: plain HTTP against the HTTPS listener (the old check) is unhealthy.
    const plain = spawnSync(
      'docker',
      ['exec', '-e', 'TICKETD_TLS_CERT=', https, 'node', '/opt/ticketd/healthcheck.mjs'],
      { encoding: 'utf8' },
    );
    expect(plain.status).toBe(1);

    for (const c of [http, https])
      expect(run('docker', ['exec', c, 'node', '-e', 'process.stdout.write(String(process.getuid()))'])).toBe('10001');
    expect(await postIds(`http://127.0.0.1:${httpPort}`, 'default', 3)).toHaveLength(3);
    const ids = await postIdsOverHttps(httpsPort, certs!.ca);
    expect(ids).toHaveLength(3);

    for (const c of [http, https]) {
      run('docker', ['stop', '-t', '15', c], { timeoutMs: 30_000 });
      expect(run('docker', ['inspect', '-f', '{{.State.ExitCode}}', c]).trim()).toBe('0');
    }
  }, 180_000);
});
