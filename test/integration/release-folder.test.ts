/**
 * The release folder (`npm run release`, docs/releasing.md) as a team receives it: every artifact
 * is listed with its digest in SHA256SUMS, and each installs from that folder alone, in a fresh temp
 * place, offline where the language allows: the server tarball (its bundled tree exactly the one its
 * npm-shrinkwrap.json names) and the client tarball with npm --offline, the wheel and the sdist with
 * pip --no-index, the jar through Maven offline with the folder as its repository, the Go module
 * through GOPROXY=file://, and the image with docker load. The installed server serves IDs from real
 * MariaDB backends (the launcher's pair), and a smoke program in each language takes IDs from it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '../../src/launcher/local-mysql.js';
import { startLocalPair, type LocalPair } from '../../src/launcher/local-pair.js';
import { dockerReady, image, requireDockerInCi, run } from '../support/docker.js';
import { runAsync } from '../support/packed-release.js';
import { findPython } from '../support/python.js';
import {
  goSmoke,
  javaSmoke,
  mavenMissing,
  nodeSmoke,
  ok,
  printedIds,
  pythonSmoke,
  writeGoStandIn,
} from '../support/release-smoke.js';
import { postIds, TEST_ADMIN_TOKEN } from '../support/ticketd.js';

const CI = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
const place = mkdtempSync(join(tmpdir(), 'ticketd-release-'));
const release = join(place, 'release');
const realGo = existsSync('clients/go/go.mod');
const goModule = realGo ? resolve('clients/go') : writeGoStandIn(join(place, 'go-standin'));
if (!realGo)
  console.log('release folder: clients/go is not on this branch; the Go module is a stand-in (ticketd.dev/ticketd)');
requireDockerInCi('the release image');
if (!dockerReady)
  console.log(
    `release folder: made with --no-image, the image is not loaded: ${process.env.TICKETD_TEST_DOCKER ?? 'Docker was not settled'}`,
  );
const python = findPython();
const maven = mavenMissing();
if (maven !== undefined)
  console.log(`release folder: the Maven install is ${CI ? 'failed (CI)' : 'not run'}: ${maven}`);
const go =
  spawnSync('go', ['version'], { encoding: 'utf8' }).status === 0
    ? undefined
    : 'no go on PATH (apt-get install golang-go)';
if (go !== undefined) console.log(`release folder: the Go install is ${CI ? 'failed (CI)' : 'not run'}: ${go}`);
const itWhen = (missing: string | undefined): typeof it => (missing === undefined || CI ? it : it.skip);

describe('the release folder, each artifact installed from it alone', () => {
  let pair: LocalPair | undefined;
  let server: ReturnType<typeof spawn> | undefined;
  let url = '';
  const taken: string[] = [];

  beforeAll(async () => {
    const args = ['scripts/release/main.mjs', '--out', release, '--go-module', goModule, '--skip-build'];
    const env = { ...process.env, ...(dockerReady ? { TICKETD_NODE_IMAGE: image('TICKETD_NODE_IMAGE') } : {}) };
    const started = Date.now();
    const made = ok(
      await runAsync(process.execPath, dockerReady ? args : [...args, '--no-image'], resolve('.'), env, 1_500_000),
      'npm run release',
    );
    console.log(`${made.stdout.trim()}\nrelease folder: made in ${((Date.now() - started) / 1000).toFixed(0)} s`);

    const app = join(place, 'server-app');
    mkdirSync(app, { recursive: true });
    ok(
      await runAsync(
        'npm',
        ['install', '--offline', '--no-audit', '--no-fund', join(release, 'npm', `ticketd-${version}.tgz`)],
        app,
      ),
      'npm install --offline of the server tarball',
    );
    pair = await startLocalPair(join(place, 'backends'));
    const serverEnv = {
      PATH: process.env.PATH ?? '',
      HOME: place,
      TICKETD_BACKENDS: pair.backendsUrl,
      TICKETD_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    };
    ok(await runAsync(join(app, 'node_modules', '.bin', 'ticketd'), ['init'], app, serverEnv, 60_000), 'ticketd init');
    server = spawn(join(app, 'node_modules', '.bin', 'ticketd'), ['serve', '--port', '0'], {
      cwd: app,
      env: serverEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    url = await new Promise<string>((done, fail) => {
      const timer = setTimeout(() => fail(new Error('the installed ticketd did not listen within 30 s')), 30_000);
      createInterface({ input: server!.stdout! }).on('line', (line) => {
        const port = /"port":(\d+).*"msg":"ticketd listening"/.exec(line)?.[1];
        if (port === undefined) return;
        clearTimeout(timer);
        done(`http://127.0.0.1:${port}`);
      });
    });
  }, 1_800_000);

  afterAll(async () => {
    server?.kill('SIGTERM');
    await pair?.stop();
    rmSync(place, { recursive: true, force: true });
    if (taken.length > 0) console.log(`release folder: ${taken.length} IDs taken by the smoke programs, none twice`);
  });

  /** Records a smoke program's IDs: three, none seen before in this file. */
  function took(ids: readonly string[]): void {
    expect(ids).toHaveLength(3);
    for (const id of ids) expect(taken).not.toContain(id);
    taken.push(...ids);
  }

  it('holds every artifact, each with its digest in SHA256SUMS', () => {
    const sums = readFileSync(join(release, 'SHA256SUMS'), 'utf8').trim().split('\n');
    const listed = new Map(sums.map((line) => [line.slice(66), line.slice(0, 64)] as const));
    const expected = [
      `npm/ticketd-${version}.tgz`,
      `npm/ticketd-client-${version}.tgz`,
      `python/ticketd_client-${version}-py3-none-any.whl`,
      `python/ticketd_client-${version}.tar.gz`,
      `maven/dev/ticketd/ticketd-client/${version}/ticketd-client-${version}.jar`,
      `maven/dev/ticketd/ticketd-client/${version}/ticketd-client-${version}-sources.jar`,
      `maven/dev/ticketd/ticketd-client/${version}/ticketd-client-${version}.pom`,
      'maven/dev/ticketd/ticketd-client/maven-metadata.xml',
      'go/ticketd.dev/ticketd/@v/list',
      `go/ticketd.dev/ticketd/@v/v${version}.info`,
      `go/ticketd.dev/ticketd/@v/v${version}.mod`,
      `go/ticketd.dev/ticketd/@v/v${version}.zip`,
      'README.md',
      'docs/releasing.md',
      'clients/java/README.md',
      'clients/python/README.md',
      ...(dockerReady ? [`image/ticketd-${version}-image.tar`, `image/ticketd-${version}-context.tar.gz`] : []),
    ];
    for (const file of expected) expect([file, listed.has(file)]).toEqual([file, true]);
    for (const [file, digest] of listed)
      expect([
        file,
        createHash('sha256')
          .update(readFileSync(join(release, file)))
          .digest('hex'),
      ]).toEqual([file, digest]);
    const count = readdirSync(release, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;
    expect(listed.size).toBe(count - 1);
  });

  it('installs the server tarball offline to exactly the tree its npm-shrinkwrap.json names, and it serves IDs', async () => {
    const installed = join(place, 'server-app', 'node_modules', 'ticketd');
    const shrinkwrap = JSON.parse(readFileSync(join(installed, 'npm-shrinkwrap.json'), 'utf8')) as {
      packages: Record<string, { version?: string }>;
    };
    const entries = Object.entries(shrinkwrap.packages).filter(([path]) => path !== '');
    expect(entries.length).toBeGreaterThan(50);
    const differing = entries.filter(([path, entry]) => {
      const manifest = join(installed, path, 'package.json');
      return (
        !existsSync(manifest) ||
        (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version !== entry.version
      );
    });
    expect(differing.map(([path]) => path)).toEqual([]);
    // And nothing beside it: every package installed under the server is one the shrinkwrap names.
    const installedPaths = readdirSync(join(installed, 'node_modules'), { withFileTypes: true, recursive: true })
      .filter((e) => e.name === 'package.json' && /node_modules\/(@[^/]+\/)?[^/]+$/.test(e.parentPath))
      .map((e) => relative(installed, e.parentPath));
    expect(installedPaths.sort()).toEqual(entries.map(([path]) => path).sort());
    took(await postIds(url, 'default', 3));
  });

  it('installs the Node client tarball offline, and a Node program takes IDs with it', async () => {
    took(printedIds(await nodeSmoke(release, place, `ticketd-client-${version}.tgz`, url)));
  }, 300_000);

  it.each(['wheel', 'sdist'] as const)(
    'installs the Python %s with pip --no-index, and a Python program takes IDs with it',
    async (dist) => {
      if (!python.ok) throw new Error(python.reason);
      took(printedIds(await pythonSmoke(release, place, python.command, dist, url)));
    },
    300_000,
  );

  itWhen(maven)(
    'resolves the jar with Maven offline from the folder as a file repository, and a Java program takes IDs with it',
    async () => {
      if (maven !== undefined) throw new Error(maven);
      took(printedIds(await javaSmoke(release, place, resolve('clients/java/debian-settings.xml'), version, url)));
    },
    600_000,
  );

  itWhen(go)(
    'fetches the Go module through GOPROXY=file:// alone, and a Go program takes IDs beside it',
    async () => {
      if (go !== undefined) throw new Error(go);
      took(printedIds(await goSmoke(release, place, version, url, !realGo)));
    },
    300_000,
  );

  (dockerReady ? it : it.skip)(
    'loads the image archive into an engine that lacks it, and the loaded image serves IDs',
    async () => {
      const tag = `ticketd:${version}`;
      spawnSync('docker', ['rmi', '-f', tag], { encoding: 'utf8' });
      expect(spawnSync('docker', ['image', 'inspect', tag]).status).not.toBe(0);
      run('docker', ['load', '-q', '-i', join(release, 'image', `ticketd-${version}-image.tar`)]);
      const port = await freePort();
      const container = run('docker', [
        'run',
        '-d',
        '--network',
        'host',
        '-e',
        `TICKETD_BACKENDS=${pair!.backendsUrl}`,
        '-e',
        `TICKETD_ADMIN_TOKEN=${TEST_ADMIN_TOKEN}`,
        '-e',
        `TICKETD_PORT=${port}`,
        tag,
      ]).trim();
      try {
        let ids: string[] | undefined;
        for (let i = 0; i < 60 && ids === undefined; i++) {
          ids = await postIds(`http://127.0.0.1:${port}`, 'default', 3).catch(() => undefined);
          if (ids === undefined) await new Promise((done) => setTimeout(done, 500));
        }
        if (ids === undefined)
          throw new Error(`the loaded image never served: ${run('docker', ['logs', container]).slice(-1500)}`);
        took(ids);
      } finally {
        spawnSync('docker', ['rm', '-f', container]);
        spawnSync('docker', ['rmi', '-f', tag]);
      }
    },
    180_000,
  );
});
