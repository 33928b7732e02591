/**
 * The Python interpreter the Python client's tests run on, and how to run its programs.
 *
 * Which python: TICKETD_PYTHON if set, else Debian's /usr/bin/python3 (what `.ci/run` installs with
 * apt-get), else the first python3 on PATH (which may be a pyenv shim). It must be 3.9 or later.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** clients/python, where the package (src/) and its test programs live. */
export const PYTHON_CLIENT_DIR = fileURLToPath(new URL('../../clients/python/', import.meta.url));

/** The interpreter found, or why none could run the client. */
export type PythonFound =
  | { readonly ok: true; readonly command: string; readonly version: string }
  | { readonly ok: false; readonly reason: string };

/** Finds a Python ≥ 3.9 (see the file comment for the order). */
export function findPython(explicit: string | undefined = process.env['TICKETD_PYTHON']): PythonFound {
  const candidates =
    explicit !== undefined && explicit !== ''
      ? [explicit]
      : existsSync('/usr/bin/python3')
        ? ['/usr/bin/python3']
        : ['python3'];
  const command = candidates[0]!;
  const probe = spawnSync(command, ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])'], {
    encoding: 'utf8',
  });
  if (probe.error !== undefined || probe.status !== 0)
    return {
      ok: false,
      reason: `no python3 to run (${command}: ${probe.error?.message ?? probe.stderr.trim()}); apt-get install python3`,
    };
  const version = probe.stdout.trim();
  const [major, minor] = version.split('.').map(Number);
  if (major! < 3 || (major === 3 && minor! < 9))
    return { ok: false, reason: `${command} is Python ${version}; the client needs 3.9 or later` };
  return { ok: true, command, version };
}

/** Says once why the Python tests do not run; under CI that is a failure, not a skip. */
export function pythonMissing(found: PythonFound, what: string): void {
  if (found.ok) return;
  if (process.env['CI'] !== undefined) {
    test(`${what} needs Python ≥ 3.9 (CI is set, so this fails)`, () => {
      throw new Error(found.reason);
    });
  } else {
    console.log(`${what}: not run: ${found.reason}`);
  }
}

/** What a Python program did. */
export interface PythonRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Its stdout's JSON lines, parsed. */
  readonly lines: Record<string, unknown>[];
}

/** The environment of a Python program: the client's sources on its path, no stray bytecode in the tree. */
export function pythonEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    PYTHONPATH: `${PYTHON_CLIENT_DIR}src`,
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONUNBUFFERED: '1',
    ...extra,
  };
}

/** Runs a Python program of the client to its end (`input`: written to its stdin once `onLine` asks). */
export function runPython(
  python: string,
  args: readonly string[],
  options: { onLine?: (line: Record<string, unknown>, stdin: NodeJS.WritableStream) => void; timeoutMs?: number } = {},
): Promise<PythonRun> {
  const child = spawn(python, args, { cwd: PYTHON_CLIENT_DIR, env: pythonEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const lines: Record<string, unknown>[] = [];
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    partial += chunk.toString();
    let at: number;
    while ((at = partial.indexOf('\n')) >= 0) {
      const line = partial.slice(0, at);
      partial = partial.slice(at + 1);
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        lines.push(parsed);
        options.onLine?.(parsed, child.stdin);
      } catch {
        // Not a JSON line: kept in stdout for the failure message.
      }
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  return new Promise((done) => {
    child.on('close', (status) => {
      clearTimeout(timer);
      child.stdin.destroy();
      done({ status, stdout, stderr, lines });
    });
  });
}

/** libfaketime's multithreaded library, for a process whose wall clock a test steps while it runs; undefined when not installed. */
export function libfaketime(): string | undefined {
  for (const dir of [
    '/usr/lib/x86_64-linux-gnu/faketime',
    '/usr/lib/aarch64-linux-gnu/faketime',
    '/usr/lib/faketime',
  ]) {
    if (!existsSync(dir)) continue;
    const found = readdirSync(dir).find((f) => f.startsWith('libfaketimeMT.so'));
    if (found !== undefined) return `${dir}/${found}`;
  }
  return undefined;
}
