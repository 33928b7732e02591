import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { runCli as ticketd, runCliAsync, sharedBackends } from '../support/ticketd.js';

describe('the ticketd command', () => {
  it('refuses bad configuration with one line naming the setting, before touching anything', () => {
    const missing = ticketd(['serve']);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe('ticketd: TICKETD_BACKENDS is not set (comma-separated mysql://user:pass@host:port/db URLs) (TICKETD_CONFIG_INVALID)');
    const bad = ticketd(['serve', '--port', 'x'], { TICKETD_BACKENDS: 'mysql://h/db' });
    expect(bad.status).toBe(2);
    expect(bad.stderr.split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/TICKETD_PORT must be an integer/);
  });

  it('refuses to serve two backends with the same offset, naming both', () => {
    const [a] = sharedBackends().split(',');
    const result = ticketd(['serve', '--port', '0'], { TICKETD_BACKENDS: `${a},${a!.replace('/ticketd', '/mysql')}` });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^ticketd: backend mysql:\/\/127\.0\.0\.1:\d+\/(mysql|ticketd) has auto_increment_offset=1, same as mysql:\/\/127\.0\.0\.1:\d+\/(ticketd|mysql) \(TICKETD_BACKEND_MISCONFIGURED\)$/);
  });

  it('serve --workers 2 stops with the reason when its workers cannot start', () => {
    const [a] = sharedBackends().split(',');
    const result = ticketd(['serve', '--port', '0', '--workers', '2'], { TICKETD_BACKENDS: `${a},${a!.replace('/ticketd', '/mysql')}` });
    expect(result.status).toBe(1);
    expect(result.stderr.split('\n')[0]).toMatch(/^ticketd: backend mysql:\/\/127\.0\.0\.1:\d+\/(mysql|ticketd) has auto_increment_offset=1, same as/);
  });

  it('init is idempotent, and sequences create/list work', () => {
    const env = { TICKETD_BACKENDS: sharedBackends() };
    for (let i = 0; i < 2; i++) {
      const init = ticketd(['init'], env);
      expect(init.stderr).toBe('');
      expect(init.status).toBe(0);
      expect(init.stdout).toMatch(/sequence default ready/);
    }
    expect(ticketd(['sequences', 'create', 'cli_made', '--block-size', '50'], env).stdout).toMatch(/created/);
    expect(ticketd(['sequences', 'create', 'cli_made', '--block-size', '50'], env).stdout).toMatch(/already exists/);
    const conflict = ticketd(['sequences', 'create', 'cli_made', '--block-size', '51'], env);
    expect(conflict.status).toBe(1);
    expect(conflict.stderr).toMatch(/^ticketd: sequence cli_made exists on mysql:\/\/.* with blockSize=50/);
    expect(ticketd(['sequences', 'create', 'Bad', '--block-size', '5'], env).stderr).toMatch(/does not match/);
    const list = ticketd(['sequences', 'list'], env);
    expect(list.stdout).toMatch(/^cli_made\tblockSize=50\tstartAfter=0\tmaxId=18446744073709551615\tids=ordered\tbackends=mysql:\/\/.*,mysql:\/\/.*$/m);
    // With a backend that does not answer, the list still comes, and says which backend is missing and why.
    const partial = ticketd(['sequences', 'list'], { TICKETD_BACKENDS: `${env.TICKETD_BACKENDS.split(',')[0]},mysql://root@127.0.0.1:1/ticketd` });
    expect(partial.status).toBe(0);
    expect(partial.stdout).toMatch(/^cli_made\t/m);
    expect(partial.stderr).toMatch(/^ticketd: warning: backend mysql:\/\/127\.0\.0\.1:1\/ticketd did not answer, so its sequences are not listed: .*ECONNREFUSED/);
  });
});

describe('ticketd --config', () => {
  it('reads backends from a JSON file, lets env and flags override it, and names a bad file in one line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ticketd-config-'));
    try {
      const file = join(dir, 'ticketd.json');
      writeFileSync(file, JSON.stringify({ backends: sharedBackends().split(',') }));
      const ok = ticketd(['--config', file, 'check']);
      expect(ok.stdout).toMatch(/^ok: 2 backends checked$/m);
      expect(ok.status).toBe(0);
      // The environment wins over the file: a bad TICKETD_BACKENDS is what is reported.
      const env = ticketd(['check'], { TICKETD_CONFIG: file, TICKETD_BACKENDS: 'postgres://x/y' });
      expect(env.status).toBe(2);
      expect(env.stderr).toMatch(/^ticketd: TICKETD_BACKENDS: postgres:\/\/x\/y has scheme postgres/);
      writeFileSync(file, JSON.stringify({ backends: sharedBackends(), port: 'eighty' }));
      const bad = ticketd(['--config', file, 'serve']);
      expect(bad.status).toBe(2);
      expect(bad.stderr).toBe('ticketd: TICKETD_PORT must be an integer from 0 to 65535; got "eighty" (TICKETD_CONFIG_INVALID)');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ticketd --version', () => {
  it('prints the package version', () => {
    const result = ticketd(['--version']);
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe((JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version);
  });
});

describe('ticketd dev', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-dev-'));

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function runOnce(during: (base: string, printed: string[]) => Promise<void> = async () => undefined): Promise<bigint[]> {
    const child = spawn(process.execPath, ['dist/cli/main.js', 'dev', '--port', '0', '--data-dir', dir], {
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { ...process.env, TICKETD_ADMIN_TOKEN: 'my-own-demo-token-0123' },
    });
    const printed: string[] = [];
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    const base = await new Promise<string>((done, fail) => {
      const timer = setTimeout(() => fail(new Error('dev did not start in 60 s')), 60_000);
      createInterface({ input: child.stdout! }).on('line', (line) => {
        printed.push(line);
        const match = /ticketd dev is running on (http:\/\/\S+)/.exec(line);
        if (match) {
          clearTimeout(timer);
          done(match[1]!);
        }
      });
    });
    await during(base, printed);
    const res = await fetch(`${base}/v1/sequences/default/ids?count=3`, { method: 'POST' });
    const ids = ((await res.json()) as { ids: string[] }).ids.map(BigInt);
    const pids = ['a', 'b'].map((n) => Number(readFileSync(join(dir, n, 'mysqld.pid'), 'utf8')));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    // Ctrl-C stops both servers too.
    for (const pid of pids) expect(existsSync(`/proc/${pid}`)).toBe(false);
    return ids;
  }

  it('serves IDs, stops cleanly on Ctrl-C, and repeats none when run again on the same data', async () => {
    const first = await runOnce(async (base, printed) => {
      // The demo says how to reach it from another shell, with the token it was given.
      await new Promise((r) => setTimeout(r, 100));
      const exportLine = printed.map((l) => l.trim()).find((l) => l.startsWith('export TICKETD_BACKENDS='));
      expect(exportLine).toMatch(/^export TICKETD_BACKENDS=mysql:\/\/\S+,mysql:\/\/\S+ TICKETD_ADMIN_TOKEN=my-own-demo-token-0123$/);
      // The README's examples, as they are but for the port, each one answered with a 2xx.
      const readme = readFileSync('README.md', 'utf8');
      const block = /## HTTP API[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)![1]!.replaceAll('localhost:8080', `localhost:${new URL(base).port}`);
      const script = `${exportLine}\nset -eo pipefail\ncurl() { command curl -sS --fail-with-body --max-time 10 "$@"; echo; }\n${block}\nnode dist/cli/main.js check\nnode dist/cli/main.js sequences list\n`;
      const examples = await runCliAsync([], {}, ['bash', '-c', script]);
      expect(examples.stderr).toBe('');
      expect(examples.status).toBe(0);
      expect(examples.stdout).toMatch(/^ok: 2 backends checked$/m);
      expect(examples.stdout).toMatch(/^orders\tblockSize=100\tstartAfter=1500000\tmaxId=2147483647\t/m);
      // A second dev on the same folder is refused in one line, and leaves the first one's servers alone.
      const second = await runCliAsync(['dev', '--port', '0', '--data-dir', dir]);
      expect(second.status).toBe(1);
      expect(second.stderr).toMatch(/^ticketd: ticketd dev \(pid \d+\) is already using the data folder .*; stop it first \(Ctrl-C\), or give this one another --data-dir \(TICKETD_DEV_RUNNING\)$/);
      // A taken port is said at once, in one line, before any server starts.
      const port = Number(new URL(base).port);
      const taken = await runCliAsync(['dev', '--port', String(port), '--data-dir', join(dir, 'other')]);
      expect(taken.status).toBe(1);
      expect(taken.stderr).toBe(`ticketd: port ${port} is already in use (another ticketd?); choose another with --port or TICKETD_PORT (TICKETD_PORT_IN_USE)`);
      // The first dev's servers still run (a second dev used to SIGKILL them).
      for (const n of ['a', 'b']) expect(existsSync(`/proc/${Number(readFileSync(join(dir, n, 'mysqld.pid'), 'utf8'))}`)).toBe(true);
      const res = await fetch(`${base}/v1/sequences/default/ids?count=1000`, { method: 'POST' });
      expect(res.status).toBe(200);
    });
    const second = await runOnce();
    expect(first).toHaveLength(3);
    // IDs are only roughly ordered across backends (README, "Run it"): what holds is no repeat.
    expect(second.filter((id) => first.includes(id))).toEqual([]);
  });
});
