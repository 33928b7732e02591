/**
 * Each client keeps its language's habits (docs/development.md, "The house"): the Python client
 * passes mypy --strict and flake8 (Debian's, configured by clients/python/.flake8), and the Java
 * client compiles with -Xlint:all -Werror both by javac alone and through its pom.xml, which Maven
 * builds offline (Debian's plugins in /usr/share/maven-repo, clients/java/debian-settings.xml), its
 * test sources compiled too (java-client.test.ts runs the unit tests, through build.sh). A missing
 * tool is said once, and fails under CI.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runAsync } from '../support/packed-release.js';
import { mavenMissing, offlineMaven } from '../support/release-smoke.js';

const CI = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
const PYTHON_DIR = resolve('clients/python');
const PYTHON_PATHS = ['src', 'tests', 'conformance', 'bench', '_build'];

/** Why `tool` cannot run here (with the package that brings it), or undefined. */
function toolMissing(tool: string, args: readonly string[], pkg: string): string | undefined {
  const ran = spawnSync(tool, args, { encoding: 'utf8' });
  return ran.error === undefined && ran.status === 0 ? undefined : `no ${tool} (apt-get install ${pkg})`;
}

const missing = {
  mypy: toolMissing('mypy', ['--version'], 'mypy'),
  flake8: toolMissing('flake8', ['--version'], 'flake8'),
  javac: toolMissing('javac', ['--version'], 'openjdk-17-jdk-headless'),
  maven: mavenMissing(),
};
for (const [tool, why] of Object.entries(missing))
  if (why !== undefined) console.log(`clients' habits: the ${tool} check is ${CI ? 'failed (CI)' : 'not run'}: ${why}`);
const checkWith = (why: string | undefined): typeof it => (why === undefined || CI ? it : it.skip);

/** Every .java file under `dir`. */
function javaSources(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.java'))
    .map((e) => join(e.parentPath, e.name));
}

describe("each client keeps its language's habits", () => {
  const scratch = mkdtempSync(join(tmpdir(), 'ticketd-habits-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  checkWith(missing.mypy)('the Python client passes mypy --strict', async () => {
    if (missing.mypy !== undefined) throw new Error(missing.mypy);
    const ran = await runAsync('mypy', ['--strict', '--cache-dir', join(scratch, 'mypy'), ...PYTHON_PATHS], PYTHON_DIR);
    expect(ran.stdout + ran.stderr).toMatch(/^Success: no issues found/m);
    expect(ran.status).toBe(0);
  });

  checkWith(missing.flake8)('the Python client passes flake8 at the width the tree uses', async () => {
    if (missing.flake8 !== undefined) throw new Error(missing.flake8);
    expect(readFileSync(join(PYTHON_DIR, '.flake8'), 'utf8')).toMatch(/^max-line-length = 120$/m);
    const ran = await runAsync('flake8', PYTHON_PATHS, PYTHON_DIR);
    expect(ran.stdout + ran.stderr).toBe('');
    expect(ran.status).toBe(0);
  });

  checkWith(missing.javac)('the Java client compiles with -Xlint:all -Werror', async () => {
    if (missing.javac !== undefined) throw new Error(missing.javac);
    const out = join(scratch, 'javac');
    const sources = javaSources(resolve('clients/java/src/main/java'));
    expect(sources.length).toBeGreaterThan(10);
    const ran = await runAsync(
      'javac',
      ['--release', '17', '-Xlint:all', '-Werror', '-d', out, ...sources],
      resolve('.'),
    );
    expect(ran.stderr).toBe('');
    expect(ran.status).toBe(0);
  });

  checkWith(missing.maven)(
    'the Java client builds through its pom.xml with Maven offline, with -Xlint:all -Werror',
    async () => {
      if (missing.maven !== undefined) throw new Error(missing.maven);
      const pom = readFileSync('clients/java/pom.xml', 'utf8');
      expect(pom).toContain('<arg>-Xlint:all</arg>');
      expect(pom).toContain('<arg>-Werror</arg>');
      // A copy: Maven writes target/ beside the pom, and the checkout stays as it was.
      const copy = join(scratch, 'clients');
      cpSync('clients/java', join(copy, 'java'), { recursive: true, filter: (p) => !/\/(build|target)$/.test(p) });
      cpSync('clients/vectors', join(copy, 'vectors'), { recursive: true });
      const settings = resolve('clients/java/debian-settings.xml');
      const ran = await runAsync(
        'mvn',
        [...offlineMaven(settings, join(scratch, 'm2')), 'package', '-DskipTests'],
        join(copy, 'java'),
      );
      if (ran.status !== 0)
        throw new Error(`mvn package exited with ${ran.status}:\n${(ran.stdout + ran.stderr).slice(-3000)}`);
      const version = readFileSync('clients/java/VERSION', 'utf8').trim();
      expect(readdirSync(join(copy, 'java', 'target'))).toContain(`ticketd-client-${version}.jar`);
      expect(
        readdirSync(join(copy, 'java', 'target', 'test-classes', 'dev', 'ticketd', 'client')).length,
      ).toBeGreaterThan(3);
    },
    600_000,
  );
});
