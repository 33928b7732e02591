/**
 * An earlier release of ticketd, built from this repository's own history: its source at a commit,
 * compiled with this checkout's TypeScript against this checkout's node_modules (the releases share
 * their dependencies' majors), once per checkout, under the system temp folder.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** Releases by version: the commit that set package.json's version. */
export const RELEASES = Object.freeze({
  '0.3.0': '9f4b57b',
  '0.4.0': '54daa8e',
  '0.7.0': 'ede51de',
  '0.11.0': '3f3d39c',
});

/** A built release: the path of its CLI, or why it could not be built here. */
export type BuiltRelease = { readonly main: string } | { readonly unavailable: string };

/** Builds the release (or finds it built) and returns the path of its `dist/cli/main.js`. */
export function buildRelease(version: keyof typeof RELEASES): BuiltRelease {
  const commit = RELEASES[version];
  const root = resolve('.');
  // The build links to this checkout's node_modules, so it is only valid for this checkout: a build
  // keyed by the commit alone outlived the clone that made it and then could not load express.
  const checkout = createHash('sha256').update(root).digest('hex').slice(0, 12);
  const dir = join(tmpdir(), `ticketd-release-${version}-${commit}-${checkout}`);
  const main = join(dir, 'dist', 'cli', 'main.js');
  if (existsSync(main) && existsSync(join(dir, 'node_modules', 'express', 'package.json'))) return { main };
  rmSync(dir, { recursive: true, force: true });
  const found = spawnSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: root });
  if (found.status !== 0)
    return { unavailable: `commit ${commit} (ticketd ${version}) is not in this clone's history (a shallow clone?)` };
  mkdirSync(tmpdir(), { recursive: true });
  const staging = mkdtempSync(join(tmpdir(), `ticketd-release-${version}-building-`));
  try {
    const archive = spawnSync('sh', ['-c', `git archive ${commit} | tar -x -C '${staging}'`], {
      cwd: root,
      encoding: 'utf8',
    });
    if (archive.status !== 0) return { unavailable: `git archive ${commit} failed: ${archive.stderr}` };
    symlinkSync(join(root, 'node_modules'), join(staging, 'node_modules'), 'dir');
    // Type errors against today's @types do not stop the emit; a missing main.js below does.
    spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
      cwd: staging,
      encoding: 'utf8',
    });
    if (!existsSync(join(staging, 'dist', 'cli', 'main.js')))
      return { unavailable: `ticketd ${version} did not compile` };
    try {
      renameSync(staging, dir);
    } catch {
      // Another test built it first: use theirs.
    }
    return existsSync(main) ? { main } : { unavailable: `ticketd ${version} was built but ${main} is missing` };
  } finally {
    if (existsSync(staging)) rmSync(staging, { recursive: true, force: true });
  }
}
