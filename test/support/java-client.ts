/** The Java client (clients/java) in tests: its toolchain, its build, and its conformance program as real processes. */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { followHolder, type Holder } from './snowflake-fleet.js';

const JUNIT = '/usr/share/java/junit-platform-console-standalone.jar';
/** JVM flags for short test programs on a shared 2-core machine: the C1 compiler only, the serial collector. */
export const LIGHT_JVM = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Xss512k'];

/** Why the Java toolchain cannot run here, or undefined when javac, java, jar and Debian's junit5 are there. */
export function javaMissing(): string | undefined {
  for (const tool of ['javac', 'java', 'jar']) {
    if (spawnSync(tool, ['--version'], { stdio: 'ignore' }).status !== 0)
      return `${tool} is not installed (apt-get install openjdk-17-jdk-headless)`;
  }
  if (!existsSync(JUNIT)) return `${JUNIT} is missing (apt-get install junit5)`;
  return undefined;
}

/** What clients/java/build.sh made in `dir`. */
export interface JavaBuild {
  readonly classpath: string;
  readonly jar: string;
  /** build.sh's output: the unit tests' summary. */
  readonly output: string;
}

/** Runs clients/java/build.sh into `dir` (compile, unit tests, jar); throws with its output when it fails. */
export async function buildJavaClient(dir: string): Promise<JavaBuild> {
  const child = spawn('sh', ['clients/java/build.sh'], {
    env: { ...process.env, TICKETD_JAVA_BUILD_DIR: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.once('close', done));
  if (code !== 0) throw new Error(`clients/java/build.sh exited with ${code}:\n${output}`);
  const jar = readdirSync(dir).find((f) => /^ticketd-client-.*\.jar$/.test(f));
  if (jar === undefined) throw new Error(`clients/java/build.sh made no jar in ${dir}`);
  return { classpath: `${join(dir, jar)}:${join(dir, 'test-classes')}`, jar: join(dir, jar), output };
}

/** libfaketime's library, for a clock that a test steps while the process runs (through a timestamp file). */
export function libfaketime(): string | undefined {
  const roots = ['/usr/lib/x86_64-linux-gnu/faketime', '/usr/lib/aarch64-linux-gnu/faketime', '/usr/lib/faketime'];
  return roots.map((r) => join(r, 'libfaketime.so.1')).find((p) => existsSync(p));
}

/**
 * Starts the conformance program (dev.ticketd.client.conformance.Conformance) in a JVM of its own
 * process group, reading its JSON lines as events. `clockFile`: its wall clock follows the offset
 * written in that file (libfaketime), the monotonic clock stays true.
 */
export function spawnJava(
  build: JavaBuild,
  name: string,
  args: readonly string[],
  options: { env?: Record<string, string>; clockFile?: string } = {},
): Holder {
  const env: Record<string, string | undefined> = { ...process.env, ...options.env };
  if (options.clockFile !== undefined) {
    const lib = libfaketime();
    if (lib === undefined) throw new Error('libfaketime is not installed (apt-get install faketime)');
    // FAKETIME_FORCE_MONOTONIC_FIX=0: with the fix, the JVM's own timed waits on the monotonic clock
    // (monitor deflation, the code sweeper, HttpClient's selector) return at once and spin, so a JVM
    // under libfaketime crawls (measured here: no lease in 20 s; with 0, a try every 100 ms as designed).
    Object.assign(env, {
      LD_PRELOAD: lib,
      FAKETIME_TIMESTAMP_FILE: options.clockFile,
      FAKETIME_NO_CACHE: '1',
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
      FAKETIME_FORCE_MONOTONIC_FIX: '0',
    });
  }
  const child = spawn(
    'java',
    [...LIGHT_JVM, '-cp', build.classpath, 'dev.ticketd.client.conformance.Conformance', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
  const { signal, events, waitFor } = followHolder(
    `java ${name}`,
    child,
    20_000,
    () => `; stderr: ${stderr}`,
    (line) => (stderr += `${line}\n`),
  );
  return {
    name,
    process: child,
    events,
    exited,
    signal,
    waitFor,
    stop: async () => {
      signal('SIGCONT');
      signal('SIGTERM');
      // A JVM that does not finish its shutdown in time is killed: a test never waits on it for ever.
      const timer = setTimeout(() => signal('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
