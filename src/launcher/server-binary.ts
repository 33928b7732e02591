/**
 * Which MySQL-compatible servers this machine can start: MariaDB or Oracle MySQL from PATH, from
 * TICKETD_MYSQLD, or Oracle MySQL from a root file system of its own (TICKETD_MYSQL_ROOT: Debian
 * unstable's mysql-server-core in a debootstrap root, test/support/mysql-root.sh). A binary in such a
 * root needs that root's C library, so it runs through the root's own dynamic loader: no chroot, and
 * every path (data directory, socket, option file) stays the host's.
 */
import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { delimiter, join, resolve } from 'node:path';
import { NoServerBinaryError } from '../core/errors.js';

/** Which server a binary is. */
export type ServerFlavor = 'mariadb' | 'mysql';

/** A server binary found on this machine. */
export interface ServerBinary {
  /** The mysqld/mariadbd file (inside `root` when there is one). */
  readonly path: string;
  readonly flavor: ServerFlavor;
  /** The version it prints, e.g. `9.7.4` or `10.11.19`. */
  readonly version: string;
  /** A root file system whose loader and libraries run the binary. */
  readonly root?: string;
}

/** Where test/support/mysql-root.sh leaves Oracle MySQL when TICKETD_MYSQL_ROOT is unset. */
export const DEFAULT_MYSQL_ROOT = '/var/cache/ticketd/mysql-root';

const EXTRA_SEARCH_DIRS = [
  '/usr/sbin',
  '/usr/local/sbin',
  '/usr/local/mysql/bin',
  '/opt/homebrew/bin',
  '/usr/local/bin',
];
const LIBRARY_DIRS = [
  'usr/lib/x86_64-linux-gnu',
  'lib/x86_64-linux-gnu',
  'usr/lib/aarch64-linux-gnu',
  'lib/aarch64-linux-gnu',
  'usr/lib',
  'lib',
];

/** Finds mariadbd or mysqld (TICKETD_MYSQLD wins); throws NoServerBinaryError with how to get one. */
export function findServerBinary(explicit: string | undefined, pathVariable: string | undefined): ServerBinary {
  if (explicit !== undefined && explicit !== '') {
    if (!isExecutable(explicit)) throw new NoServerBinaryError(`TICKETD_MYSQLD=${explicit} is not an executable file`);
    return describeBinary(explicit, rootOf(explicit));
  }
  const found = searchPath(['mariadbd', 'mysqld'], pathVariable);
  if (found === undefined) {
    throw new NoServerBinaryError(
      'no mariadbd or mysqld found on PATH: install one (apt-get install mariadb-server, or brew install mysql), set TICKETD_MYSQLD, or run the docker compose demo (docker compose -f docker/compose.yml up)',
    );
  }
  return describeBinary(found, undefined);
}

/**
 * Every engine this machine has, at most one per flavor: the server TICKETD_MYSQLD or PATH names
 * first, then the other flavor from PATH, then Oracle MySQL from TICKETD_MYSQL_ROOT (or its default
 * place). The suite runs its engine conformance set on each.
 */
export function findServerBinaries(env: Readonly<Record<string, string | undefined>>): ServerBinary[] {
  const found: ServerBinary[] = [];
  const add = (binary: ServerBinary | undefined): void => {
    if (binary !== undefined && !found.some((b) => b.flavor === binary.flavor)) found.push(binary);
  };
  try {
    add(findServerBinary(env.TICKETD_MYSQLD, env.PATH));
  } catch {
    // None on PATH: a MySQL root may still be there.
  }
  for (const name of ['mariadbd', 'mysqld']) {
    const path = searchPath([name], env.PATH);
    if (path !== undefined) add(describeBinary(path, undefined));
  }
  const root = env.TICKETD_MYSQL_ROOT ?? DEFAULT_MYSQL_ROOT;
  const rooted = join(root, 'usr', 'sbin', 'mysqld');
  if (root !== '' && isExecutable(rooted)) add(describeBinary(rooted, resolve(root)));
  return found;
}

/** A readable name for output: `MariaDB 10.11.19`, `MySQL 9.7.4`. */
export function engineName(binary: ServerBinary): string {
  return `${binary.flavor === 'mariadb' ? 'MariaDB' : 'MySQL'} ${binary.version}`;
}

/**
 * The command that runs a program of the binary's installation: the server itself, or a client
 * tool beside it (`mysqldump`, `mysql`, `mariadb-dump`). Inside a root, the root's loader runs it.
 */
export function commandFor(
  binary: ServerBinary,
  program?: string,
): { readonly command: string; readonly args: readonly string[] } {
  const target = program === undefined ? binary.path : toolPath(binary, program);
  if (binary.root === undefined) return { command: target, args: [] };
  const libraries = LIBRARY_DIRS.map((d) => join(binary.root!, d)).filter((d) => existsSync(d));
  return { command: loaderOf(binary.root)!, args: ['--library-path', libraries.join(delimiter), target] };
}

/** Server options that keep a rooted binary to its root's files instead of the host's (MariaDB's own, say). */
export function rootServerArgs(binary: ServerBinary): string[] {
  if (binary.root === undefined) return [];
  const share = join(binary.root, 'usr', 'share', 'mysql');
  return [
    `--basedir=${join(binary.root, 'usr')}`,
    `--lc-messages-dir=${share}`,
    `--character-sets-dir=${join(share, 'charsets')}`,
    `--plugin-dir=${join(binary.root, 'usr', 'lib', 'mysql', 'plugin')}`,
  ];
}

function toolPath(binary: ServerBinary, program: string): string {
  if (binary.root !== undefined) return join(binary.root, 'usr', 'bin', program);
  const beside = [join(binary.path, '..', '..', 'bin', program), join(binary.path, '..', program)];
  return beside.find(isExecutable) ?? program;
}

/** `ROOT` when the path is ROOT/usr/sbin/mysqld and ROOT has a loader of its own (not the host's /). */
function rootOf(path: string): string | undefined {
  const root = resolve(path, '..', '..', '..');
  return root !== '/' && loaderOf(root) !== undefined ? root : undefined;
}

function loaderOf(root: string): string | undefined {
  for (const dir of ['lib64', 'lib']) {
    let names: string[];
    try {
      names = readdirSync(join(root, dir));
    } catch {
      continue;
    }
    const loader = names.find((n) => /^ld-linux.*\.so\.\d+$/.test(n));
    if (loader !== undefined) return join(root, dir, loader);
  }
  return undefined;
}

function describeBinary(path: string, root: string | undefined): ServerBinary {
  const probe = { path, flavor: 'mysql' as const, version: '', ...(root !== undefined && { root }) };
  const { command, args } = commandFor(probe);
  const result = spawnSync(command, [...args, '--version'], { encoding: 'utf8' });
  // Output is null (whatever its type says) when the command could not start at all.
  const [stdout, stderr]: (string | null)[] = [result.stdout, result.stderr];
  const text = `${stdout ?? ''}${stderr ?? ''}`;
  const version = /Ver\s+(\d+\.\d+\.\d+)/.exec(text)?.[1] ?? 'unknown';
  return { ...probe, flavor: /mariadb/i.test(text) ? 'mariadb' : 'mysql', version };
}

function searchPath(names: readonly string[], pathVariable: string | undefined): string | undefined {
  const dirs = [...(pathVariable ?? '').split(delimiter).filter((d) => d !== ''), ...EXTRA_SEARCH_DIRS];
  return names.flatMap((n) => dirs.map((d) => join(d, n))).find(isExecutable);
}

/** True when the file exists and may be run. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
