/**
 * The client as its own package: `npm pack` it (from a copy never built), install the tarball into a throwaway project (no
 * registry needed: it depends on nothing), and lease IDs from a running ticketd through both its
 * ESM and CommonJS entry points, with its types checked by tsc.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { useSharedServer } from '../support/ticketd.js';

/** Runs a command without blocking this process (the ticketd it talks to runs in it). */
function run(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((done) => child.once('close', (status) => done({ status, stdout, stderr })));
}

describe('ticketd-client installed on its own', () => {
  const context = useSharedServer();
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-client-'));
  const app = join(dir, 'app');

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('installs with no dependency, and leases IDs through ESM and CommonJS, typed', async () => {
    // Packed from a copy that was never built: prepack builds it, and README and LICENSE go along.
    const source = join(dir, 'client');
    cpSync(resolve('packages/client'), source, {
      recursive: true,
      filter: (path) => !path.includes(join('client', 'dist')) && !path.includes('node_modules'),
    });
    expect(existsSync(join(source, 'dist'))).toBe(false);
    symlinkSync(resolve('node_modules'), join(source, 'node_modules'));
    const packed = await run('npm', ['pack', '--pack-destination', dir, '--json'], source);
    expect(packed.status).toBe(0);
    const manifest = (
      JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[]
    )[0]!;
    expect(manifest.files.map((f) => f.path)).toEqual(
      expect.arrayContaining([
        'README.md',
        'LICENSE',
        'package.json',
        'dist/esm/index.js',
        'dist/esm/index.d.ts',
        'dist/cjs/index.js',
        'dist/cjs/package.json',
      ]),
    );
    const tarball = join(dir, manifest.filename);
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    const installed = await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], app);
    expect(installed.stderr).not.toMatch(/ERR!/);
    expect(installed.status).toBe(0);
    // Installing it adds only itself.
    expect(readdirSync(join(app, 'node_modules')).filter((n) => !n.startsWith('.'))).toEqual(['ticketd-client']);

    const env = { TICKETD_URL: context.server.url };
    const esm = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import { createTicketClient } from 'ticketd-client'; const c = createTicketClient({ urls: [process.env.TICKETD_URL], sequence: 'default' }); const ids = await c.nextBatch(3); await c.close(); console.log(ids.join(' '));",
      ],
      app,
      env,
    );
    expect(esm.stderr).toBe('');
    const esmIds = esm.stdout.trim().split(' ').map(BigInt);
    expect(esmIds).toHaveLength(3);
    expect(esmIds[1]).toBe(esmIds[0]! + 1n);

    const cjs = await run(
      process.execPath,
      [
        '-e',
        "const { createTicketClient, NoBufferedIdsError } = require('ticketd-client'); const c = createTicketClient({ urls: [process.env.TICKETD_URL], sequence: 'default' }); try { c.nextSync() } catch (e) { if (!(e instanceof NoBufferedIdsError)) throw e } c.next().then(async (id) => { await c.close(); console.log(String(id)) });",
      ],
      app,
      env,
    );
    expect(cjs.stderr).toBe('');
    expect(BigInt(cjs.stdout.trim())).toBeGreaterThan(0n);
    // Two clients leased two blocks: their IDs differ.
    expect(esmIds).not.toContain(BigInt(cjs.stdout.trim()));

    writeFileSync(
      join(app, 'check.ts'),
      "import { createTicketClient, type TicketClient } from 'ticketd-client';\nconst c: TicketClient = createTicketClient({ urls: ['http://x'], sequence: 's' });\nconst id: Promise<bigint> = c.next();\nvoid id;\n",
    );
    const tsc = await run(
      process.execPath,
      [
        resolve('node_modules/typescript/bin/tsc'),
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--types',
        'node',
        '--typeRoots',
        resolve('node_modules/@types'),
        'check.ts',
      ],
      app,
    );
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
    // npm pack, npm install and tsc in turn: 37 s alone, 70 s beside the server's install test on a loaded machine.
  }, 180_000);
});
