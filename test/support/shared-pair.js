// The backend pair shared by integration tests: MySQL 8.4 containers through testcontainers when a
// container runtime is reachable (or TICKETD_TEST_RUNTIME=containers demands one), otherwise two
// local servers from the project's launcher. Which one ran is said once, in the test output.
// Tests that kill or stop a server start a private pair with the launcher in every case.
// Plain JavaScript: jest loads global setup without moduleNameMapper, so this uses the build.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalPair } from '../../dist/launcher/local-pair.js';

/** How long finding a container runtime may take before the launcher is used. */
const RUNTIME_PROBE_MS = 5000;
const MYSQL_IMAGE = 'mysql:8.4';
const ROOT_PASSWORD = 'ticketd-test';
/**
 * The shared pair runs the option files at increment 2, as a fleet for a 32-bit legacy column would
 * (docs/migrating.md): the edge tests then reach every ID up to maxId. Private pairs, the demo and
 * docker run the shipped increment 16.
 */
const SHARED_PAIR_ARGS = ['--auto-increment-increment=2'];

/** Starts the pair; resolves with its TICKETD_BACKENDS value, a stop function and what it is. */
export async function startSharedPair() {
  const wanted = process.env.TICKETD_TEST_RUNTIME ?? 'auto';
  if (!['auto', 'containers', 'local'].includes(wanted)) {
    throw new Error(`TICKETD_TEST_RUNTIME must be auto, containers or local; got ${JSON.stringify(wanted)}`);
  }
  if (wanted !== 'local') {
    const runtime = await findContainerRuntime();
    if (runtime.ok) return startContainerPair();
    if (wanted === 'containers') throw new Error(`TICKETD_TEST_RUNTIME=containers, but no container runtime is reachable: ${runtime.reason}`);
    console.log(`ticketd tests: no container runtime reachable (${runtime.reason}); backends come from the local launcher. Set TICKETD_TEST_RUNTIME=containers to require MySQL 8.4 containers.`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-shared-'));
  const pair = await startLocalPair(dir, undefined, {}, SHARED_PAIR_ARGS);
  return {
    backendsUrl: pair.backendsUrl,
    description: 'local launcher',
    stop: async () => {
      await pair.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function findContainerRuntime() {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    let timer;
    const timeout = new Promise((_, fail) => {
      timer = setTimeout(() => fail(new Error(`no answer within ${RUNTIME_PROBE_MS} ms`)), RUNTIME_PROBE_MS);
    });
    await Promise.race([getContainerRuntimeClient(), timeout]).finally(() => clearTimeout(timer));
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: String(error instanceof Error ? error.message : error).split('\n')[0] };
  }
}

async function startContainerPair() {
  const { MySqlContainer } = await import('@testcontainers/mysql');
  const { SQL_DIR } = await import('../../dist/paths.js');
  const start = (name) =>
    new MySqlContainer(MYSQL_IMAGE)
      .withDatabase('ticketd')
      .withRootPassword(ROOT_PASSWORD)
      // The same option files as the launcher and docker/compose.yml: one source for A and B.
      .withCopyFilesToContainer([{ source: join(SQL_DIR, `backend-${name}.cnf`), target: '/etc/mysql/conf.d/ticketd.cnf' }])
      .withCommand(['mysqld', ...SHARED_PAIR_ARGS])
      .start();
  const containers = await Promise.all([start('a'), start('b')]);
  console.log(`ticketd tests: shared backends are ${MYSQL_IMAGE} containers (testcontainers)`);
  return {
    backendsUrl: containers.map((c) => `mysql://root:${ROOT_PASSWORD}@${c.getHost()}:${c.getPort()}/ticketd`).join(','),
    description: 'containers',
    stop: async () => {
      await Promise.all(containers.map((c) => c.stop()));
    },
  };
}
