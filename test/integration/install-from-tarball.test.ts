/**
 * Installable without a git clone: `npm pack` the server (the client bundled in it), install the
 * tarball alone into an empty folder outside the repository with production dependencies only,
 * and from there run `npx ticketd --version`, `init` and `serve` against a fresh launcher pair
 * and get IDs. The packaged README's and docs' links must resolve inside the installed package.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { startLocalPair, type LocalPair } from '../../src/launcher/local-pair.js';
import { installTarball, packRelease, runAsync, type Packed } from '../support/packed-release.js';
import { postIds, TEST_ADMIN_TOKEN } from '../support/ticketd.js';

/** Every relative link target of a Markdown file that does not resolve beside it. */
function brokenLinks(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const targets = [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((t) => !/^[a-z]+:/.test(t) && !t.startsWith('#'));
  return targets.map((t) => t.replace(/#.*$/, '')).filter((t) => !existsSync(join(dirname(file), t)));
}

/** Size of a folder tree in bytes. */
function treeBytes(path: string): number {
  let total = 0;
  for (const entry of readdirSync(path, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += readFileSync(join(entry.parentPath, entry.name)).byteLength;
  }
  return total;
}

describe('ticketd installed from its tarball', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-install-'));
  const app = join(dir, 'app');
  const installed = join(app, 'node_modules', 'ticketd');
  const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
  let packed: { server: Packed; client: Packed };
  let pair: LocalPair | undefined;

  beforeAll(async () => {
    packed = await packRelease(dir);
  }, 300_000);

  afterAll(async () => {
    await pair?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('packs both tarballs; the server carries the client, its docs and deploy files, no tests or sources', () => {
    const paths = packed.server.files.map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'dist/cli/main.js',
        'node_modules/ticketd-client/package.json',
        'node_modules/ticketd-client/dist/esm/index.js',
        'docs/production.md',
        'deploy/systemd/ticketd.service',
        'deploy/kubernetes/deployment.yaml',
        'sql/backend-a.cnf',
        'CHANGELOG.md',
        'SECURITY.md',
        'README.md',
      ]),
    );
    expect(paths.filter((p) => p.startsWith('src/') || p.startsWith('test/') || p.endsWith('.map'))).toEqual([]);
    expect(packed.client.filename).toBe(`ticketd-client-${version}.tgz`);
    console.log(
      `packed: ${packed.server.filename} ${(packed.server.size / 1024).toFixed(0)} KiB (${(packed.server.unpackedSize / 1024).toFixed(0)} KiB unpacked), ${packed.client.filename} ${(packed.client.size / 1024).toFixed(0)} KiB`,
    );
  });

  it('installs alone in an empty folder with production dependencies only, and npx ticketd --version runs there', async () => {
    const result = await installTarball(join(dir, packed.server.filename), app);
    expect(result.stderr).not.toMatch(/ERR!/);
    expect(result.status).toBe(0);
    const modules = readdirSync(join(app, 'node_modules')).filter((n) => !n.startsWith('.'));
    for (const dev of ['jest', 'typescript', 'testcontainers', 'playwright-core', 'ts-jest', '@redocly'])
      expect(modules).not.toContain(dev);
    // The client came from inside the tarball, not from a registry.
    expect(existsSync(join(installed, 'node_modules', 'ticketd-client', 'dist', 'esm', 'index.js'))).toBe(true);
    const count = readdirSync(join(app, 'node_modules'), { withFileTypes: true, recursive: true }).filter(
      (e) => e.name === 'package.json' && /node_modules\/(@[^/]+\/)?[^/]+$/.test(e.parentPath),
    ).length;
    console.log(
      `installed from ${packed.server.filename}: ${count} packages, ${(treeBytes(join(app, 'node_modules')) / 1e6).toFixed(1)} MB in node_modules`,
    );

    const versionRun = await runAsync('npx', ['--no-install', 'ticketd', '--version'], app);
    expect(versionRun.stdout.trim()).toBe(version);
    const imported = await runAsync(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('ticketd'); console.log(typeof m.createTicketClient)"],
      app,
    );
    expect(imported.stdout.trim()).toBe('function');
  }, 300_000);

  it('resolves every relative link of the installed README and docs inside the package', () => {
    const files = [
      join(installed, 'README.md'),
      ...readdirSync(join(installed, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => join(installed, 'docs', f)),
    ];
    expect(files.length).toBeGreaterThan(5);
    const broken = files.flatMap((f) => brokenLinks(f).map((target) => `${f.slice(installed.length + 1)} → ${target}`));
    expect(broken).toEqual([]);
  });

  it('runs ticketd init and serve from the installed folder against real backends, and serves IDs', async () => {
    pair = await startLocalPair(join(dir, 'backends'));
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? dir,
      TICKETD_BACKENDS: pair.backendsUrl,
      TICKETD_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    };
    const init = await runAsync('npx', ['--no-install', 'ticketd', 'init'], app, env, 60_000);
    expect(init.stderr).toBe('');
    expect(init.status).toBe(0);
    const check = await runAsync('npx', ['--no-install', 'ticketd', 'check'], app, env, 60_000);
    expect(check.status).toBe(0);

    // The installed bin itself, so the signal reaches ticketd and not an npx wrapper.
    const child = spawn(join(app, 'node_modules', '.bin', 'ticketd'), ['serve', '--port', '0'], {
      cwd: app,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    try {
      const url = await new Promise<string>((done, fail) => {
        const timer = setTimeout(() => fail(new Error('the installed ticketd did not listen within 20 s')), 20_000);
        createInterface({ input: child.stdout }).on('line', (line) => {
          const match = /"port":(\d+).*"msg":"ticketd listening"/.exec(line);
          if (match !== null) {
            clearTimeout(timer);
            done(`http://127.0.0.1:${match[1]}`);
          }
        });
        void exited.then((code) => fail(new Error(`the installed ticketd exited with ${code}`)));
      });
      const ids = await postIds(url, 'default', 5);
      expect(ids).toHaveLength(5);
      expect(new Set(ids).size).toBe(5);
      console.log(`installed ticketd served ${ids.join(', ')}`);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 120_000);

  it('keeps the installed package apart from this checkout', () => {
    expect(resolve(app).startsWith(resolve('.'))).toBe(false);
  });
});
