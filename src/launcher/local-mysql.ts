/**
 * Starts MySQL-compatible servers (MariaDB or MySQL) on free loopback ports in a directory of our
 * own, with the backend option files from sql/. Used by `ticketd dev`, the tests and the benchmarks.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { pingSocket, runAsRoot } from '../backend/mysql/socket-admin.js';
import { LauncherError } from '../core/errors.js';
import { SQL_DIR } from '../paths.js';
import { commandFor, isExecutable, rootServerArgs, type ServerBinary, type ServerFlavor } from './server-binary.js';

export {
  findServerBinaries,
  findServerBinary,
  engineName,
  type ServerBinary,
  type ServerFlavor,
} from './server-binary.js';

/** The database ticketd's tables live in on local servers. */
export const LOCAL_DATABASE = 'ticketd';
/** How long a local server may take to accept connections. */
export const SERVER_READY_TIMEOUT_MS = 60_000;
/** How long a clean shutdown may take before the server is killed. */
export const SERVER_STOP_TIMEOUT_MS = 30_000;

/** ER_UNKNOWN_COM_ERROR: what a Galera node answers before it is ready for statements. */
const ER_WSREP_NOT_READY = 1047;
const running = new Set<ChildProcess>();

/** One local server. */
export interface LocalServer {
  readonly name: string;
  readonly port: number;
  readonly dir: string;
  /** `mysql://root@127.0.0.1:<port>/ticketd` */
  readonly url: string;
  readonly flavor: ServerFlavor;
  /** The server's process id, while it runs. */
  readonly pid: number | undefined;
  /** Sends a signal to the server process (chaos tests: SIGKILL, SIGSTOP, SIGCONT). */
  signal(signal: NodeJS.Signals): void;
  /** Waits until the process has exited (after a kill). */
  exited(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  restart(): Promise<void>;
  /** Shuts it down cleanly; kills it if that takes too long. */
  stop(): Promise<void>;
}

/** Options for one server. */
export interface LocalServerOptions {
  readonly name: string;
  /** Option file, e.g. sql/backend-a.cnf; without one the server runs on its defaults. */
  readonly optionFile?: string;
  /** Directory for data, socket, pid and log; reused when it already holds a data directory. */
  readonly dir: string;
  readonly binary: ServerBinary;
  /** Port to use; a free one is picked when omitted. */
  readonly port?: number;
  /** More server options (tests: --log-bin and --server-id for a replicated pair). */
  readonly extraArgs?: readonly string[];
}

/** Initialises (once) and starts a server, resolving when it accepts connections. */
export async function startLocalServer(options: LocalServerOptions): Promise<LocalServer> {
  const dir = resolve(options.dir);
  const dataDir = join(dir, 'data');
  // A temp directory of its own: servers initialised at once in a shared /tmp clash on temp tables.
  mkdirSync(join(dir, 'tmp'), { recursive: true });
  stopStaleServer(join(dir, 'mysqld.pid'), dataDir);
  if (!existsSync(join(dataDir, 'mysql'))) initialiseDataDir(options.binary, dataDir, dir);
  const port = options.port ?? (await freePort());
  let child: ChildProcess | undefined;
  let exit: Promise<void> = Promise.resolve();

  const start = async (): Promise<void> => {
    child = spawnServer(options, dir, dataDir, port);
    const proc = child;
    exit = new Promise((done) => proc.once('exit', () => done()));
    running.add(proc);
    // Registered with the first server, not on import: importing the launcher changes nothing.
    if (running.size === 1 && !process.listeners('exit').includes(killAllLocalServers))
      process.once('exit', killAllLocalServers);
    void exit.then(() => running.delete(proc));
    await waitReady(dir, proc, exit);
    await prepareAccounts(dir);
  };
  await start();

  return {
    name: options.name,
    port,
    dir,
    url: `mysql://root@127.0.0.1:${port}/${LOCAL_DATABASE}`,
    flavor: options.binary.flavor,
    get pid() {
      return child?.exitCode === null && child.signalCode === null ? child.pid : undefined;
    },
    signal: (signal) => {
      if (child?.pid !== undefined && child.exitCode === null) process.kill(child.pid, signal);
    },
    exited: () => exit,
    restart: start,
    stop: async () => {
      const proc = child;
      if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGCONT');
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), SERVER_STOP_TIMEOUT_MS);
      await exit;
      clearTimeout(timer);
    },
  };
}

function initialiseDataDir(binary: ServerBinary, dataDir: string, dir: string): void {
  const asRoot = process.getuid?.() === 0 ? ['--user=root'] : [];
  const common = [`--datadir=${dataDir}`, `--tmpdir=${join(dir, 'tmp')}`, ...asRoot];
  const { command, args } =
    binary.flavor === 'mariadb'
      ? {
          command: installDbFor(binary.path),
          args: ['--no-defaults', ...common, '--auth-root-authentication-method=normal', '--skip-test-db'],
        }
      : (({ command: c, args: a }) => ({
          command: c,
          args: [...a, '--no-defaults', '--initialize-insecure', ...common, ...rootServerArgs(binary)],
        }))(commandFor(binary));
  const result = spawnSync(command, args, { encoding: 'utf8', cwd: dir });
  if (result.status !== 0) {
    // Output is null (whatever its type says) when the command could not start at all.
    const [stdout, stderr]: (string | null)[] = [result.stdout, result.stderr];
    const output = `${stdout ?? ''}${stderr ?? ''}${result.error?.message ?? ''}`
      .trim()
      .split('\n')
      .slice(-5)
      .join(' | ');
    throw new LauncherError(`initialising ${dataDir} with ${command} failed: ${output}`);
  }
}

function installDbFor(serverPath: string): string {
  const beside = [
    join(serverPath, '..', '..', 'bin', 'mariadb-install-db'),
    join(serverPath, '..', 'mariadb-install-db'),
  ];
  return beside.find(isExecutable) ?? 'mariadb-install-db';
}

function spawnServer(options: LocalServerOptions, dir: string, dataDir: string, port: number): ChildProcess {
  const args = [
    // --defaults-file (or --no-defaults) must come first; either keeps the machine's own my.cnf out.
    options.optionFile === undefined ? '--no-defaults' : `--defaults-file=${options.optionFile}`,
    `--datadir=${dataDir}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--socket=${join(dir, 'mysqld.sock')}`,
    `--pid-file=${join(dir, 'mysqld.pid')}`,
    `--log-error=${join(dir, 'error.log')}`,
    `--tmpdir=${join(dir, 'tmp')}`,
    '--innodb-buffer-pool-size=64M',
    '--max-connections=500',
    // MySQL's default secure_file_priv folder need not exist here, and it refuses to start without it.
    ...(options.binary.flavor === 'mysql' ? ['--mysqlx=OFF', '--secure-file-priv='] : []),
    ...rootServerArgs(options.binary),
    ...(options.extraArgs ?? []),
    ...(process.getuid?.() === 0 ? ['--user=root'] : []),
  ];
  const { command, args: prefix } = commandFor(options.binary);
  // Own process group: a Ctrl-C meant for ticketd does not reach the server, which we stop ourselves.
  return spawn(command, [...prefix, ...args], { stdio: 'ignore', detached: true });
}

async function waitReady(dir: string, child: ChildProcess, exit: Promise<void>): Promise<void> {
  const deadline = Date.now() + SERVER_READY_TIMEOUT_MS;
  const state = { exited: false };
  void exit.then(() => (state.exited = true));
  for (;;) {
    if (state.exited) throw new LauncherError(`server in ${dir} exited during start: ${logTail(dir)}`);
    try {
      await pingSocket(join(dir, 'mysqld.sock'), 1000);
      return;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new LauncherError(
          `server in ${dir} did not accept connections within ${SERVER_READY_TIMEOUT_MS} ms: ${logTail(dir)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function prepareAccounts(dir: string): Promise<void> {
  // MySQL's --initialize-insecure creates only root@localhost; TCP from 127.0.0.1 needs its own account.
  const statements =
    `CREATE DATABASE IF NOT EXISTS ${LOCAL_DATABASE};` +
    "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';" +
    "GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;";
  const deadline = Date.now() + SERVER_READY_TIMEOUT_MS;
  for (;;) {
    try {
      await runAsRoot(join(dir, 'mysqld.sock'), statements);
      return;
    } catch (error) {
      // A Galera node takes connections before it has joined its cluster, and refuses statements
      // until then ("WSREP has not yet prepared node for application use").
      if ((error as { errno?: number }).errno !== ER_WSREP_NOT_READY || Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function logTail(dir: string): string {
  try {
    return readFileSync(join(dir, 'error.log'), 'utf8').trim().split('\n').slice(-3).join(' | ');
  } catch {
    return '(no error log)';
  }
}

/** A server left running by a crashed `ticketd dev` holds the data directory's lock; stop it. */
function stopStaleServer(pidFile: string, dataDir: string): void {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return;
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return;
  }
  if (!cmdline.includes(dataDir)) return;
  process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100 && existsSync(`/proc/${pid}`); i++) spawnSync('sleep', ['0.05']);
}

/** True when nothing listens on the port at `host` (every address when omitted) a moment ago. */
export function portIsFree(port: number, host?: string): Promise<boolean> {
  return new Promise((done) => {
    const probe = createServer();
    probe.once('error', () => done(false));
    probe.listen(port, host, () => probe.close(() => done(true)));
  });
}

/** A port that was free on 127.0.0.1 a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? done(address.port) : fail(new Error('no port')),
      );
    });
  });
}

/** The option file of backend `a`, `b`, … in sql/. */
export function backendOptionFile(name: string): string {
  return join(SQL_DIR, `backend-${name}.cnf`);
}

/** Kills every server this process started and has not stopped (last resort at exit). */
export function killAllLocalServers(): void {
  for (const child of running) child.kill('SIGKILL');
}
