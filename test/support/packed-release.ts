/**
 * The release as a team receives it: the server's tarball (`npm pack`, the client bundled inside)
 * installed into an empty folder outside the repository with production dependencies only.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The outcome of a command run to its end. */
export interface Ran {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command without blocking this process's event loop (servers a test talks to may live in it). */
export function runAsync(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 300_000,
): Promise<Ran> {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((done) =>
    child.once('close', (status) => {
      clearTimeout(timer);
      done({ status, stdout, stderr });
    }),
  );
}

/** One tarball `npm pack --json` made. */
export interface Packed {
  readonly name: string;
  readonly version: string;
  readonly filename: string;
  readonly size: number;
  readonly unpackedSize: number;
  readonly files: readonly { path: string }[];
}

/**
 * Packs the server and the client (`npm run package`'s command) into `dest`, from the build
 * `npm test` made first (`--ignore-scripts`: packing would otherwise build again through `prepare`).
 */
export async function packRelease(dest: string): Promise<{ server: Packed; client: Packed }> {
  const packed = await runAsync(
    'npm',
    ['pack', '--workspaces', '--include-workspace-root', '--ignore-scripts', '--json', '--pack-destination', dest],
    resolve('.'),
  );
  if (packed.status !== 0) throw new Error(`npm pack exited with ${packed.status}: ${packed.stderr.slice(-2000)}`);
  const manifests = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Packed[];
  const server = manifests.find((m) => m.name === 'ticketd');
  const client = manifests.find((m) => m.name === 'ticketd-client');
  if (server === undefined || client === undefined)
    throw new Error(`npm pack made ${manifests.map((m) => m.filename).join(', ')}, not both tarballs`);
  return { server, client };
}

/** Installs a tarball into a new, empty project folder `app` with production dependencies only. */
export async function installTarball(tarball: string, app: string): Promise<Ran> {
  mkdirSync(app, { recursive: true });
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'ticketd-deployment', version: '1.0.0', private: true }),
  );
  // The npm cache first (npm ci filled it); the registry only for what it lacks.
  return runAsync('npm', ['install', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', tarball], app);
}
