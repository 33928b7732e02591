/**
 * A newcomer's first hour, as a test. The demo (`ticketd dev`, what `npm run demo` runs after its
 * build), then, in a shell that pasted the demo's `export` line: every command the demo prints,
 * every shell example of the README's "Run it", "HTTP API" and "Client SDK" sections, verbatim,
 * and the README's JavaScript in an app that installed the packed client. Then the demo is
 * restarted, prints the same `export` line, and the same commands run again on it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort, portIsFree } from '../../src/launcher/local-mysql.js';
import { runCliAsync } from '../support/ticketd.js';

/** The port the README's examples name. */
const README_PORT = 8080;
/** The line the demo ends its banner with. */
const LAST_LINE = /^Ctrl-C stops ticketd and both servers/;

interface Demo {
  readonly base: string;
  readonly printed: readonly string[];
  /** Sends Ctrl-C and waits; the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `ticketd dev` and waits for its whole banner. */
async function startDemo(dir: string, port: number): Promise<Demo> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['dist/cli/main.js', 'dev', '--port', String(port), '--data-dir', dir],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    },
  );
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const printed: string[] = [];
  let errors = '';
  child.stderr!.on('data', (c: Buffer) => (errors += c.toString()));
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => {
      // Ctrl-C, so that it stops its servers too, rather than leave them running.
      child.kill('SIGINT');
      fail(new Error(`dev did not start in 90 s; printed:\n${printed.join('\n')}\n${errors}`));
    }, 90_000);
    void exited.then((code) => fail(new Error(`dev exited with ${code} before it served: ${errors}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      printed.push(line);
      if (LAST_LINE.test(line)) {
        clearTimeout(timer);
        done();
      }
    });
  });
  const base = /ticketd dev is running on (http:\/\/\S+)/.exec(printed.join('\n'))![1]!;
  return {
    base,
    printed,
    stop: async () => {
      child.kill('SIGINT');
      return exited;
    },
  };
}

/** The lines under a heading of the banner, up to the next blank line. */
function linesUnder(printed: readonly string[], heading: string): string[] {
  const start = printed.findIndex((l) => l.startsWith(heading));
  const end = printed.findIndex((l, i) => i > start && l.trim() === '');
  return printed.slice(start + 1, end).map((l) => l.trim());
}

/** The fenced blocks of a language in one `## ` section of the README. */
function readmeBlocks(section: string, language: string): string[] {
  const readme = readFileSync('README.md', 'utf8');
  const start = readme.indexOf(`\n## ${section}\n`);
  const end = readme.indexOf('\n## ', start + 1);
  const text = readme.slice(start, end === -1 ? undefined : end);
  return [...text.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
}

/** Runs a script in bash as a newcomer's shell would after pasting the export line: each curl must answer 2xx. */
function shell(
  script: string,
  exportLine: string,
  cwd = process.cwd(),
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const prelude = `cd ${JSON.stringify(cwd)}\n${exportLine}\nset -eo pipefail\ncurl() { command curl -sS --fail-with-body --max-time 10 "$@"; echo; }\n`;
  return runCliAsync([], { HOME: process.env.HOME ?? '', TMPDIR: process.env.TMPDIR ?? '/tmp' }, [
    'bash',
    '-c',
    prelude + script,
  ]);
}

describe('a newcomer follows the README and what the programs print', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-newcomer-'));
  /** The demo while it runs, so a failed expectation does not leave it (and its servers) behind. */
  let running: Demo | undefined;
  afterAll(async () => {
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the demo, its printed commands and the README examples verbatim, twice around a restart, with no ID repeated', async () => {
    // Verbatim means port 8080; where something else holds it, the one change is the port (said once).
    let port = README_PORT;
    // Every address, as the demo will listen.
    if (!(await portIsFree(README_PORT))) {
      port = await freePort();
      // The demo's export line then sets TICKETD_URL, which examples/sdk reads.
      console.log(
        `newcomer walkthrough: port ${README_PORT} is taken on this machine; the README's examples run with port ${port} instead`,
      );
    }
    const local = (text: string): string => text.replaceAll(`localhost:${README_PORT}`, `localhost:${port}`);
    const data = join(dir, 'demo');

    // README's JavaScript is examples/sdk/app.mjs, word for word.
    const [js] = readmeBlocks('Client SDK', 'js');
    expect(js).toBe(readFileSync('examples/sdk/app.mjs', 'utf8'));
    const [runIt, ...noMoreRunIt] = readmeBlocks('Run it', 'sh');
    expect(runIt!.trim()).toBe('npm ci && npm run demo');
    expect(noMoreRunIt).toEqual([]);
    const [inCheckout, packAndInstall] = readmeBlocks('Client SDK', 'sh') as [string, string];
    const [api] = readmeBlocks('HTTP API', 'sh') as [string];

    const exportLines: string[] = [];
    const issued: bigint[][] = [];
    let app = '';
    for (const round of [1, 2]) {
      const demo = await startDemo(data, port);
      running = demo;
      const exportLine = linesUnder(demo.printed, 'In another shell')[0]!;
      expect(exportLine).toMatch(
        /^export TICKETD_BACKENDS=mysql:\/\/\S+,mysql:\/\/\S+ TICKETD_ADMIN_TOKEN=[\w-]{16,} INVOICES_TOKEN=[\w-]{16,}( TICKETD_URL=http:\/\/localhost:\d+)?$/,
      );
      exportLines.push(exportLine);
      const tries = linesUnder(demo.printed, 'Try:');
      expect(tries.length).toBeGreaterThanOrEqual(4);

      // What the demo printed, then the README's examples: every one answers 2xx or exits 0.
      const printed = await shell(tries.join('\n'), exportLine);
      expect(printed.stderr).toBe('');
      expect(printed.status).toBe(0);
      expect(printed.stdout).toMatch(/^ok: 2 backends checked$/m);
      expect(printed.stdout).toMatch(
        /^invoices\tblockSize=10000\tstartAfter=0\tmaxId=9223372036854775807\tids=opaque\t/m,
      );
      const examples = await shell(`${local(api)}\n${inCheckout}`, exportLine);
      expect(examples.stderr).toBe('');
      expect(examples.status).toBe(0);
      expect(examples.stdout).toMatch(
        /"ids":"opaque","ordered":"\d+","ticket":"\d+","backend":"mysql:\/\/127\.0\.0\.1:\d+\/ticketd"/,
      );
      // "A" in the release example is the first backend the export line names.
      const backendA = /TICKETD_BACKENDS=mysql:\/\/root@([^,]+),/.exec(exportLine)![1]!;
      expect(examples.stdout).toContain(
        `{"backend":"mysql://${backendA}","sequence":"orders","wasQuarantined":false,"quarantineReason":null,`,
      );
      // Both example apps, ESM and CommonJS, got IDs of both sequences.
      expect(examples.stdout.match(/^default: \d+ then \d+, \d+, \d+$/gm)).toHaveLength(2);
      expect(examples.stdout.match(/^invoices: \d+$/gm)).toHaveLength(2);

      // The client packed and installed into an app of its own, running the README's JavaScript.
      if (round === 1) {
        const installed = await shell(`${packAndInstall}\npwd`, exportLine);
        expect(installed.status).toBe(0);
        app = installed.stdout.trim().split('\n').pop()!;
        expect(existsSync(join(app, 'node_modules', 'ticketd-client', 'README.md'))).toBe(true);
        writeFileSync(join(app, 'app.mjs'), local(js!));
      }
      const ran = await shell('node app.mjs', exportLine, app);
      expect(ran.stderr).toBe('');
      expect(ran.stdout).toMatch(/^default: \d+ then \d+, \d+, \d+\ninvoices: \d+\n$/);

      if (round === 1) await secondDemoIsRefused(data, port);
      const res = await fetch(`${demo.base}/v1/sequences/default/ids?count=1000`, { method: 'POST' });
      issued.push(((await res.json()) as { ids: string[] }).ids.map(BigInt));
      const pids = ['a', 'b'].map((n) => Number(readFileSync(join(data, n, 'mysqld.pid'), 'utf8')));
      running = undefined;
      expect(await demo.stop()).toBe(0);
      // Ctrl-C stops both servers too.
      for (const pid of pids) expect(existsSync(`/proc/${pid}`)).toBe(false);
    }
    // The pasted line still works after the restart: same ports, same tokens.
    expect(exportLines[1]).toBe(exportLines[0]);
    // IDs are only roughly ordered across backends (README, "HTTP API"): what holds is no repeat.
    expect(issued[1]!.filter((id) => issued[0]!.includes(id))).toEqual([]);
    rmSync(app, { recursive: true, force: true });
  });
});

/** A second dev on the same folder is refused in one line, and leaves the first one's servers alone. */
async function secondDemoIsRefused(data: string, port: number): Promise<void> {
  const second = await runCliAsync(['dev', '--port', '0', '--data-dir', data]);
  expect(second.status).toBe(1);
  expect(second.stderr).toMatch(
    /^ticketd: ticketd dev \(pid \d+\) is already using the data folder .*; stop it first \(Ctrl-C\), or give this one another --data-dir \(TICKETD_DEV_RUNNING\)$/,
  );
  // A taken port is said at once, in one line, before any server starts or any folder is made.
  const other = join(data, '..', 'other');
  const taken = await runCliAsync(['dev', '--port', String(port), '--data-dir', other]);
  expect(taken.status).toBe(1);
  expect(taken.stderr).toBe(
    `ticketd: port ${port} is already in use (another ticketd?); choose another with --port or TICKETD_PORT (TICKETD_PORT_IN_USE)`,
  );
  expect(existsSync(other)).toBe(false);
  for (const n of ['a', 'b'])
    expect(existsSync(`/proc/${Number(readFileSync(join(data, n, 'mysqld.pid'), 'utf8'))}`)).toBe(true);
}
