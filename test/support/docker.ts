/**
 * Helpers for the tests that need a Docker engine: whether one answers (settled once per run by
 * test/support/shared-pair.js), the images to use, the compose command, and network partitions cut
 * with iptables inside a container's network namespace.
 */
import { spawn, spawnSync } from 'node:child_process';

/** True when global setup found an engine and the images; otherwise the tests say why, once, there. */
export const dockerReady = process.env.TICKETD_TEST_DOCKER === 'yes';

/** CI brings up an engine (.ci/run): there, a missing one is a failure, not a quiet skip. */
export function requireDockerInCi(what: string): void {
  const ci = process.env.CI;
  if (dockerReady || ci === undefined || ci === '' || ci === 'false') return;
  it(`has a Docker engine in CI (${what})`, () => {
    throw new Error(
      `CI is set but ${process.env.TICKETD_TEST_DOCKER ?? 'Docker was not settled'}: .ci/run should have started an engine`,
    );
  });
}

/** The image named by a TICKETD_*_IMAGE variable that global setup published. */
export function image(variable: 'TICKETD_MYSQL_IMAGE' | 'TICKETD_MARIADB_IMAGE' | 'TICKETD_NODE_IMAGE'): string {
  const name = process.env[variable];
  if (name === undefined) throw new Error(`${variable} is unset: global setup settles it when an engine answers`);
  return name;
}

/** Runs a command to completion; its stdout, or an error with its stderr. */
export function run(
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): string {
  const result = spawnSync(command, args, {
    encoding: 'utf8',
    env: options.env ?? process.env,
    timeout: options.timeoutMs ?? 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited with ${result.status ?? result.signal}: ${(result.stderr || String(result.error ?? '')).trim().slice(-2000)}`,
    );
  }
  return result.stdout;
}

/** `docker compose` (v2) where the plugin answers, otherwise Debian's `docker-compose` 1.29. */
export function composeCommand(): readonly string[] {
  return spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' }).status === 0
    ? ['docker', 'compose']
    : ['docker-compose'];
}

/** The PID of a running container's first process, whose network namespace is the container's. */
export function containerPid(id: string): number {
  const pid = Number(run('docker', ['inspect', '-f', '{{.State.Pid}}', id]).trim());
  if (!(pid > 0)) throw new Error(`container ${id} is not running`);
  return pid;
}

/** Whether a container is running now. */
export function containerRunning(id: string): boolean {
  return run('docker', ['inspect', '-f', '{{.State.Running}}', id]).trim() === 'true';
}

/**
 * Drops every packet between a container and the given addresses, in the container's own network
 * namespace, in both directions: connections half-open and packets vanish, as in a real partition
 * (no reset, no refusal). `direction` 'out' drops only what the container sends them: it still
 * receives and acts on what they send, and its replies are lost.
 */
export function cut(containerId: string, peers: readonly string[], direction: 'both' | 'out' = 'both'): void {
  const pid = String(containerPid(containerId));
  for (const peer of peers) {
    if (direction === 'both') run('nsenter', ['-t', pid, '-n', 'iptables', '-I', 'INPUT', '-s', peer, '-j', 'DROP']);
    run('nsenter', ['-t', pid, '-n', 'iptables', '-I', 'OUTPUT', '-d', peer, '-j', 'DROP']);
  }
}

/** Removes every rule `cut` added in the container's namespace. */
export function heal(containerId: string): void {
  const pid = String(containerPid(containerId));
  run('nsenter', ['-t', pid, '-n', 'iptables', '-F', 'INPUT']);
  run('nsenter', ['-t', pid, '-n', 'iptables', '-F', 'OUTPUT']);
}

/**
 * Proves a partition holds: a TCP connection from inside `fromContainer` to host:port neither
 * connects nor is refused within `ms`: it times out. Returns 'timeout', 'connected' or 'refused'
 * (bash's /dev/tcp, which the MySQL, MariaDB and Node images all have).
 */
export function probeConnect(
  fromContainer: string,
  host: string,
  port: number,
  ms = 1500,
): Promise<'timeout' | 'connected' | 'refused'> {
  const seconds = (ms / 1000).toFixed(1);
  // Not spawnSync: the load a test runs meanwhile lives on this process's event loop.
  const child = spawn(
    'docker',
    ['exec', fromContainer, 'timeout', seconds, 'bash', '-c', `exec 3<>/dev/tcp/${host}/${port}`],
    { stdio: 'ignore' },
  );
  return new Promise((done, fail) => {
    child.once('error', fail);
    child.once('exit', (status) => done(status === 124 ? 'timeout' : status === 0 ? 'connected' : 'refused'));
  });
}
