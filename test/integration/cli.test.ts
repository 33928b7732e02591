import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli as ticketd, sharedBackends } from '../support/ticketd.js';

describe('the ticketd command', () => {
  it('refuses bad configuration with one line naming the setting, before touching anything', () => {
    const missing = ticketd(['serve']);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe(
      'ticketd: TICKETD_BACKENDS is not set (comma-separated mysql://user:pass@host:port/db URLs) (TICKETD_CONFIG_INVALID)',
    );
    const bad = ticketd(['serve', '--port', 'x'], { TICKETD_BACKENDS: 'mysql://h/db' });
    expect(bad.status).toBe(2);
    expect(bad.stderr.split('\n')).toHaveLength(1);
    expect(bad.stderr).toBe('ticketd: --port must be an integer from 0 to 65535; got "x" (TICKETD_CONFIG_INVALID)');
    const source = ticketd(['migrate', 'plan', '--table', 'orders']);
    expect(source.status).toBe(2);
    expect(source.stderr).toBe(
      'ticketd: --source (or TICKETD_SOURCE, or TICKETD_SOURCE_FILE) is not set: the legacy database, as mysql://user:pass@host:port/db (TICKETD_CONFIG_INVALID)',
    );
    const workers = ticketd(['serve', '--workers', '0'], { TICKETD_BACKENDS: 'mysql://h/db' });
    expect(workers.stderr).toBe('ticketd: --workers must be an integer from 1 to 64; got "0" (TICKETD_CONFIG_INVALID)');
  });

  it('refuses to serve two backends with the same offset, naming both', () => {
    const [a] = sharedBackends().split(',');
    const result = ticketd(['serve', '--port', '0'], { TICKETD_BACKENDS: `${a},${a!.replace('/ticketd', '/mysql')}` });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /^ticketd: backend mysql:\/\/127\.0\.0\.1:\d+\/(mysql|ticketd) has auto_increment_offset=1, same as mysql:\/\/127\.0\.0\.1:\d+\/(ticketd|mysql) \(TICKETD_BACKEND_MISCONFIGURED\)$/,
    );
  });

  it('serve --workers 2 stops with the reason when its workers cannot start', () => {
    const [a] = sharedBackends().split(',');
    const result = ticketd(['serve', '--port', '0', '--workers', '2'], {
      TICKETD_BACKENDS: `${a},${a!.replace('/ticketd', '/mysql')}`,
    });
    expect(result.status).toBe(1);
    expect(result.stderr.split('\n')[0]).toMatch(
      /^ticketd: backend mysql:\/\/127\.0\.0\.1:\d+\/(mysql|ticketd) has auto_increment_offset=1, same as/,
    );
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
    expect(list.stdout).toMatch(
      /^cli_made\tblockSize=50\tstartAfter=0\tmaxId=9223372036854775807\tids=ordered\tbackends=mysql:\/\/.*,mysql:\/\/.*$/m,
    );
    // With a backend that does not answer, the list still comes, and says which backend is missing and why.
    const partial = ticketd(['sequences', 'list'], {
      TICKETD_BACKENDS: `${env.TICKETD_BACKENDS.split(',')[0]},mysql://root@127.0.0.1:1/ticketd`,
    });
    expect(partial.status).toBe(0);
    expect(partial.stdout).toMatch(/^cli_made\t/m);
    expect(partial.stderr).toMatch(
      /^ticketd: warning: backend mysql:\/\/127\.0\.0\.1:1\/ticketd did not answer, so its sequences are not listed: .*ECONNREFUSED/,
    );
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
      expect(bad.stderr).toBe(
        'ticketd: TICKETD_PORT must be an integer from 0 to 65535; got "eighty" (TICKETD_CONFIG_INVALID)',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ticketd --version', () => {
  it('prints the package version', () => {
    const result = ticketd(['--version']);
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(
      (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version,
    );
  });
});
