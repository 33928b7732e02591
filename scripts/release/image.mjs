// The container image of a release: its build context (exactly the files docker/Dockerfile copies,
// with the Dockerfile and .dockerignore) as a tarball, the image built from that context alone (so
// the context in the folder is proven complete), and the image as a `docker save` archive.
import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { must, runs } from './run.mjs';

/** Folders a build context never carries (the .dockerignore leaves them out too). */
const NEVER = new Set(['node_modules', 'dist', '.git', 'coverage']);

/**
 * The repository paths docker/Dockerfile's COPY lines take from the build context (not from stages).
 * @param {string} dockerfile
 * @returns {string[]}
 */
export function contextPaths(dockerfile) {
  const paths = new Set(['docker/Dockerfile', '.dockerignore']);
  for (const line of dockerfile.replace(/\\\n/g, ' ').split('\n')) {
    const words = line.trim().split(/\s+/);
    if (words[0]?.toUpperCase() !== 'COPY' || words.some((w) => w.startsWith('--from'))) continue;
    for (const source of words.slice(1, -1).filter((w) => !w.startsWith('--'))) paths.add(source.replace(/^\.\//, ''));
  }
  return [...paths].sort();
}

/**
 * Why no image can be built here, or undefined when a Docker engine answers.
 * @returns {string | undefined}
 */
export function dockerMissing() {
  if (!runs('docker', ['--version'])) return 'no docker client on PATH';
  if (!runs('docker', ['info'])) return `no Docker engine answers (DOCKER_HOST=${process.env.DOCKER_HOST ?? 'unset'})`;
  return undefined;
}

/**
 * Writes the build context tarball and the saved image of `version` into `outDir`; returns their paths.
 * @param {{ root: string, work: string, outDir: string, version: string, revision: string, created: Date, nodeImage: string }} options
 * @returns {{ context: string, archive: string, tag: string }}
 */
export function releaseImage({ root, work, outDir, version, revision, created, nodeImage }) {
  mkdirSync(outDir, { recursive: true });
  const context = join(work, 'context');
  for (const path of contextPaths(readFileSync(join(root, 'docker', 'Dockerfile'), 'utf8'))) {
    if (!existsSync(join(root, path)))
      throw new Error(`docker/Dockerfile copies ${path}, which is not in the repository`);
    cpSync(join(root, path), join(context, path), {
      recursive: true,
      filter: (source) => !source.split('/').some((part) => NEVER.has(part)),
    });
  }
  const contextTarball = join(outDir, `ticketd-${version}-context.tar.gz`);
  must(
    'tar',
    ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '-czf', contextTarball, '-C', context, '.'],
    root,
  );

  const tag = `ticketd:${version}`;
  must(
    'docker',
    [
      'build',
      '-q',
      '-f',
      'docker/Dockerfile',
      '--build-arg',
      `NODE_IMAGE=${nodeImage}`,
      '--build-arg',
      `VERSION=${version}`,
      '--build-arg',
      `REVISION=${revision}`,
      '--build-arg',
      `CREATED=${created.toISOString()}`,
      '-t',
      tag,
      '.',
    ],
    context,
  );
  const archive = join(outDir, `ticketd-${version}-image.tar`);
  must('docker', ['save', '-o', archive, tag], root);
  return { context: contextTarball, archive, tag };
}
