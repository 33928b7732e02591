// The backend pair shared by integration tests: MySQL containers through testcontainers when a Docker
// engine answers (or TICKETD_TEST_RUNTIME=containers demands one), otherwise two local servers from
// the project's launcher. Which one ran is said once, in the test output.
// It also settles, once per run, what every Docker test needs: whether an engine answers, and which
// images to use (the official ones, or docker/local-images.sh's stand-ins where none can be pulled).
// Tests that kill or stop a server start a private pair with the launcher in every case.
// Plain JavaScript: jest loads global setup without moduleNameMapper, so this uses the build.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Wait } from 'testcontainers';
import { startLocalPair } from '../../dist/launcher/local-pair.js';

/** How long finding a Docker engine may take before the launcher is used. */
const ENGINE_PROBE_MS = 10_000;
/** Building the stand-ins from Debian packages takes about a minute; loading them from the cache seconds. */
const IMAGES_TIMEOUT_MS = 600_000;
const ROOT_PASSWORD = 'ticketd-test';
/**
 * The shared pair runs the option files at increment 2, as a fleet for a 32-bit legacy column would
 * (docs/migrating.md): the edge tests then reach every ID up to maxId. Private pairs, the demo and
 * docker run the shipped increment 16.
 */
const SHARED_PAIR_ARGS = ['--auto-increment-increment=2'];

/**
 * Finds a Docker engine and the images to use, and publishes both to every test through the
 * environment: TICKETD_TEST_DOCKER is 'yes' or why not; TICKETD_MYSQL_IMAGE and TICKETD_NODE_IMAGE
 * name the images. Says once when no engine answers.
 */
export function settleDocker() {
  const engine = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], {
    encoding: 'utf8',
    timeout: ENGINE_PROBE_MS,
  });
  if (engine.status !== 0) {
    const why = engine.error ? engine.error.message : (engine.stderr || engine.stdout).trim().split('\n').pop();
    process.env.TICKETD_TEST_DOCKER = `no Docker engine answers (${why})`;
  } else {
    const images = spawnSync('bash', ['docker/local-images.sh'], { encoding: 'utf8', timeout: IMAGES_TIMEOUT_MS });
    if (images.status !== 0) {
      process.env.TICKETD_TEST_DOCKER = `docker/local-images.sh failed: ${(images.stderr || String(images.error)).trim().split('\n').pop()}`;
    } else {
      for (const match of images.stdout.matchAll(/^export (TICKETD_(?:MYSQL|MARIADB|NODE)_IMAGE)=(\S+)$/gm))
        process.env[match[1]] = match[2];
      process.env.TICKETD_TEST_DOCKER = 'yes';
      // Ryuk's image cannot be pulled where no registry answers; every test stops what it starts.
      if (spawnSync('docker', ['image', 'inspect', 'testcontainers/ryuk:0.14.0']).status !== 0)
        process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';
      // Published ports are reached on loopback, not through the bridge's gateway address.
      process.env.TESTCONTAINERS_HOST_OVERRIDE ??= '127.0.0.1';
      console.log(
        `ticketd tests: Docker engine ${engine.stdout.trim()}; MySQL image ${process.env.TICKETD_MYSQL_IMAGE}, MariaDB image ${process.env.TICKETD_MARIADB_IMAGE}, Node image ${process.env.TICKETD_NODE_IMAGE}`,
      );
      return;
    }
  }
  console.log(
    `ticketd tests: the Docker tests (compose demo, testcontainers, partitions) do not run: ${process.env.TICKETD_TEST_DOCKER}`,
  );
}

/** Starts the pair; resolves with its TICKETD_BACKENDS value, a stop function and what it is. */
export async function startSharedPair() {
  const wanted = process.env.TICKETD_TEST_RUNTIME ?? 'auto';
  if (!['auto', 'containers', 'local'].includes(wanted)) {
    throw new Error(`TICKETD_TEST_RUNTIME must be auto, containers or local; got ${JSON.stringify(wanted)}`);
  }
  if (wanted !== 'local') {
    if (process.env.TICKETD_TEST_DOCKER === 'yes') return startContainerPair();
    if (wanted === 'containers')
      throw new Error(`TICKETD_TEST_RUNTIME=containers, but ${process.env.TICKETD_TEST_DOCKER}`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-shared-'));
  const pair = await startLocalPair(dir, undefined, {}, SHARED_PAIR_ARGS);
  console.log('ticketd tests: shared backends come from the local launcher');
  return {
    backendsUrl: pair.backendsUrl,
    description: 'local launcher',
    stop: async () => {
      await pair.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A MySQL container is ready when root's query over TCP is answered inside it. An open port is not
 * enough: Docker's proxy accepts on the published port before anything listens behind it, and the
 * image's entrypoint starts the server twice (first-run setup without networking, then for real), so
 * a client let in by the port check met "Connection lost" (a CI run of 0.12.0).
 */
export function answersQueries(rootPassword) {
  return Wait.forSuccessfulCommand(
    `mysql --protocol=TCP -h127.0.0.1 -P3306 -uroot -p'${rootPassword}' -e 'SELECT 1'`,
  ).withStartupTimeout(120_000);
}

async function startContainerPair() {
  const { MySqlContainer } = await import('@testcontainers/mysql');
  const { SQL_DIR } = await import('../../dist/paths.js');
  const image = process.env.TICKETD_MYSQL_IMAGE;
  const start = (name) =>
    new MySqlContainer(image)
      .withDatabase('ticketd')
      .withRootPassword(ROOT_PASSWORD)
      // The same option files as the launcher and docker/compose.yml: one source for A and B.
      .withCopyFilesToContainer([
        { source: join(SQL_DIR, `backend-${name}.cnf`), target: '/etc/mysql/conf.d/ticketd.cnf' },
      ])
      .withCommand(['mysqld', ...SHARED_PAIR_ARGS])
      .withWaitStrategy(answersQueries(ROOT_PASSWORD))
      .start();
  const started = await Promise.allSettled([start('a'), start('b')]);
  const containers = started.filter((s) => s.status === 'fulfilled').map((s) => s.value);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await Promise.all(containers.map((c) => c.stop()));
    throw failed.reason;
  }
  console.log(`ticketd tests: shared backends are ${image} containers (testcontainers)`);
  return {
    backendsUrl: containers.map((c) => `mysql://root:${ROOT_PASSWORD}@${c.getHost()}:${c.getPort()}/ticketd`).join(','),
    description: 'containers',
    stop: async () => {
      await Promise.all(containers.map((c) => c.stop()));
    },
  };
}
