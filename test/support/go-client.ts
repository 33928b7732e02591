/**
 * The Go client (clients/go) in tests: its toolchain, its checks (go vet, gofmt, go test), its
 * programs built once, and how to run them.
 *
 * Which go: TICKETD_GO if set, else `go` on PATH (Debian's golang-go, 1.19 or later). It runs with
 * no network: GOFLAGS=-mod=mod, GOPROXY=off, GOTOOLCHAIN=local (the client uses the standard library only).
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** clients/go: the module ticketd.dev/ticketd, its commands and its example. */
export const GO_CLIENT_DIR = fileURLToPath(new URL('../../clients/go/', import.meta.url));

/** The go command found, or why none can build the client. */
export type GoFound =
  | { readonly ok: true; readonly command: string; readonly version: string }
  | { readonly ok: false; readonly reason: string };

/** The environment of the go command and the programs it built: no module proxy, no toolchain download. */
export function goEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    GOFLAGS: '-mod=mod',
    GOPROXY: 'off',
    GOTOOLCHAIN: 'local',
    ...extra,
  };
}

/** Finds a go of version 1.19 or later. */
export function findGo(explicit: string | undefined = process.env['TICKETD_GO']): GoFound {
  const command = explicit !== undefined && explicit !== '' ? explicit : 'go';
  const probe = spawnSync(command, ['version'], { encoding: 'utf8', env: goEnv() });
  if (probe.error !== undefined || probe.status !== 0)
    return {
      ok: false,
      reason: `no go to run (${command}: ${probe.error?.message ?? probe.stderr.trim()}); apt-get install golang-go`,
    };
  const version = /go(\d+)\.(\d+)/.exec(probe.stdout);
  if (version === null) return { ok: false, reason: `${command} version said ${probe.stdout.trim()}` };
  if (Number(version[1]) === 1 && Number(version[2]) < 19)
    return { ok: false, reason: `${command} is ${version[0]}; the client needs Go 1.19 or later` };
  return { ok: true, command, version: version[0] };
}

/** Says once why the Go tests do not run; under CI that is a failure, not a skip. */
export function goMissing(found: GoFound, what: string): void {
  if (found.ok) return;
  if (process.env['CI'] !== undefined) {
    test(`${what} needs Go ≥ 1.19 (CI is set, so this fails)`, () => {
      throw new Error(found.reason);
    });
  } else {
    console.log(`${what}: not run: ${found.reason}`);
  }
}

/** What a program did. */
export interface GoRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Its stdout's JSON lines, parsed. */
  readonly lines: Record<string, unknown>[];
}

/** Runs a program to its end in clients/go (`onLine`: each JSON line of its stdout, with its stdin). */
export function runGo(
  program: string,
  args: readonly string[],
  options: {
    onLine?: (line: Record<string, unknown>, stdin: NodeJS.WritableStream) => void;
    timeoutMs?: number;
    env?: Record<string, string>;
  } = {},
): Promise<GoRun> {
  const child = spawn(program, args, { cwd: GO_CLIENT_DIR, env: goEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'] });
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

/** The programs built from the module: the conformance commands, the Snowflake holder and the README's example. */
export interface GoPrograms {
  readonly conformance: string;
  readonly holder: string;
  readonly example: string;
}

/** Builds the module's programs into `dir`; throws with go build's output when it fails. */
export async function buildGoPrograms(go: string, dir: string): Promise<GoPrograms> {
  const run = await runGo(go, [
    'build',
    '-o',
    `${dir}/`,
    './cmd/ticketd-conformance',
    './cmd/snowflake-holder',
    './example',
  ]);
  if (run.status !== 0) throw new Error(`go build exited with ${run.status}:\n${run.stderr}${run.stdout}`);
  return {
    conformance: join(dir, 'ticketd-conformance'),
    holder: join(dir, 'snowflake-holder'),
    example: join(dir, 'example'),
  };
}
