#!/usr/bin/env node
// `npm run release [-- --out <folder>] [--no-image] [--go-module <folder>] [--skip-build]`: one
// folder holding every artifact of this version (docs/releasing.md, "The release folder"): the
// Node tarballs, the Python wheel and sdist, the Java client as a Maven repository, the Go module
// as a module proxy serves it, the container image and its build context, the docs and SHA256SUMS.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { writeGoModule } from './go-module.mjs';
import { dockerMissing, releaseImage } from './image.mjs';
import { mavenRepository } from './maven-repository.mjs';
import { npmTarballs } from './npm-tarballs.mjs';
import { pythonDists } from './python-dists.mjs';
import { must, runs } from './run.mjs';

const root = resolve(import.meta.dirname, '..', '..');
/** Debian's interpreter (where python3-build is installed), else the first python3 on PATH. */
const DEFAULT_PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
/** The docs a release carries, at the paths the README's links expect. */
const DOCS = [
  'README.md',
  'CHANGELOG.md',
  'SECURITY.md',
  'LICENSE',
  'docs',
  'clients/conformance.md',
  'packages/client/README.md',
];

const say = (line) => console.log(`release: ${line}`);

/**
 * What cannot be made here, one line each (empty when everything can).
 * @param {{ goModule: string, image: boolean, python: string }} wanted
 * @returns {string[]}
 */
function missingTools({ goModule, image, python }) {
  const missing = [];
  if (!runs(python, ['-c', 'import build']))
    missing.push(`${python} cannot import build: apt-get install python3-build`);
  for (const tool of ['javac', 'jar'])
    if (!runs(tool, ['--version'])) missing.push(`no ${tool}: apt-get install openjdk-17-jdk-headless`);
  if (!existsSync(join(goModule, 'go.mod')))
    missing.push(`no Go module at ${goModule} (no go.mod there): give --go-module <folder>`);
  if (image) {
    const why = dockerMissing();
    if (why !== undefined)
      missing.push(`the image needs a Docker engine: ${why}; pass --no-image to leave the image out`);
  }
  return missing;
}

/**
 * Every file under `dir`, as paths relative to it, sorted.
 * @param {string} dir
 * @returns {string[]}
 */
function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

/**
 * Writes every artifact into its folder under `out`, saying what it made.
 * @param {{ out: string, work: string, version: string, python: string, goModule: string, image: boolean, time: Date, revision: string }} release
 */
function writeArtifacts({ out, work, version, python, goModule, image, time, revision }) {
  const npm = npmTarballs({ root, work: join(work, 'npm'), outDir: join(out, 'npm') });
  say(`npm: ${relative(out, npm.server)} (dependencies bundled, npm-shrinkwrap.json), ${relative(out, npm.client)}`);
  const pythonDir = join(root, 'clients', 'python');
  const dists = pythonDists({ pythonDir, outDir: join(out, 'python'), version, python });
  say(`python: ${dists.map((d) => relative(out, d)).join(', ')}`);
  const javaDir = join(root, 'clients', 'java');
  const maven = mavenRepository({ javaDir, work: join(work, 'java'), repoRoot: join(out, 'maven'), version, time });
  say(`maven: ${relative(out, maven)}`);
  const go = writeGoModule({ moduleDir: goModule, version, proxyRoot: join(out, 'go'), time });
  say(`go: ${go.path} v${version} (GOPROXY=file://${join(out, 'go')})`);
  if (!image) {
    say('image: left out (--no-image)');
    return;
  }
  const nodeImage = process.env.TICKETD_NODE_IMAGE || 'node:20-slim';
  const imageWork = join(work, 'image');
  const made = releaseImage({
    root,
    work: imageWork,
    outDir: join(out, 'image'),
    version,
    revision,
    created: time,
    nodeImage,
  });
  say(`image: ${made.tag} as ${relative(out, made.archive)}, its context ${relative(out, made.context)}`);
}

/**
 * Copies the docs into `out` and writes SHA256SUMS of every file there; returns how many it lists.
 * @param {string} out
 * @returns {number}
 */
function writeDocsAndSums(out) {
  for (const doc of DOCS) cpSync(join(root, doc), join(out, doc), { recursive: true });
  for (const client of ['java', 'python', 'go']) {
    const readme = join(root, 'clients', client, 'README.md');
    if (existsSync(readme)) cpSync(readme, join(out, 'clients', client, 'README.md'));
  }
  const digest = (file) =>
    createHash('sha256')
      .update(readFileSync(join(out, file)))
      .digest('hex');
  const sums = filesUnder(out).map((f) => `${digest(f)}  ${f}\n`);
  writeFileSync(join(out, 'SHA256SUMS'), sums.join(''));
  return sums.length;
}

function main() {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      'no-image': { type: 'boolean', default: false },
      'go-module': { type: 'string' },
      'skip-build': { type: 'boolean', default: false },
    },
  });
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  const out = resolve(values.out ?? join(root, 'release', `ticketd-${version}`));
  const goModule = resolve(values['go-module'] ?? join(root, 'clients', 'go'));
  const python = process.env.TICKETD_PYTHON || DEFAULT_PYTHON;
  const image = !values['no-image'];

  const javaVersion = readFileSync(join(root, 'clients', 'java', 'VERSION'), 'utf8').trim();
  const missing = missingTools({ goModule, image, python });
  if (javaVersion !== version)
    missing.push(`clients/java/VERSION is ${javaVersion}, package.json is ${version}: set it`);
  if (missing.length > 0) throw new Error(`cannot make the release folder:\n  ${missing.join('\n  ')}`);
  if (existsSync(out) && readdirSync(out).length > 0) throw new Error(`${out} is not empty: remove it or give --out`);

  const revision = must('git', ['rev-parse', 'HEAD'], root).trim();
  const time = new Date(must('git', ['log', '-1', '--format=%cI'], root).trim());
  const work = join(tmpdir(), `ticketd-release-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  try {
    if (!values['skip-build']) must('npm', ['run', 'build'], root);
    writeArtifacts({ out, work, version, python, goModule, image, time, revision });
    const sums = writeDocsAndSums(out);
    say(`${out}: ${sums} files in SHA256SUMS`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

try {
  main();
} catch (error) {
  console.error(`release: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
