/**
 * deploy/systemd/ticketd.service passes `systemd-analyze verify`, and its sandbox is scored by
 * `systemd-analyze security`. verify needs ExecStart's binary to exist, which /opt/ticketd does
 * not here, so it checks a copy whose ExecStart names this checkout's built CLI; every other line
 * is the shipped file's. No systemd runs as PID 1 here: the unit is verified, not started.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const analyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
const available = analyze.status === 0;
const ci = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
const unitText = readFileSync('deploy/systemd/ticketd.service', 'utf8');

/** The values of every line `Key=` of the unit, in order. */
function values(key: string): string[] {
  return unitText.split('\n').flatMap((line) => (line.startsWith(`${key}=`) ? [line.slice(key.length + 1)] : []));
}

describe('the systemd unit', () => {
  it('asks for what the issue and docs promise: a dedicated user, the sandbox, credentials through _FILE settings, restart, graceful stop, SIGHUP reload', () => {
    expect(values('DynamicUser')).toEqual(['yes']);
    for (const [key, value] of Object.entries({
      NoNewPrivileges: 'yes',
      ProtectSystem: 'strict',
      PrivateTmp: 'yes',
      CapabilityBoundingSet: '',
      RestrictAddressFamilies: 'AF_INET AF_INET6 AF_UNIX',
      KillSignal: 'SIGTERM',
      Restart: 'on-failure',
    })) {
      expect([key, values(key)]).toEqual([key, [value]]);
    }
    expect(values('SystemCallFilter')).toEqual(['@system-service', '~@privileged']);
    expect(values('ExecReload')).toEqual(['kill -HUP $MAINPID']);
    // ticketd exits 1 after 10 s of draining; systemd must not kill it sooner.
    expect(Number(/^(\d+)s$/.exec(values('TimeoutStopSec')[0] ?? '')?.[1])).toBeGreaterThan(10);
    // Every secret setting reads a credential, and every credential is read by one.
    const credentials = values('LoadCredential').map((v) => v.split(':')[0]!);
    const fileSettings = values('Environment').filter((v) => v.includes('=%d/'));
    expect(fileSettings.map((v) => v.slice(v.indexOf('%d/') + 3)).sort()).toEqual([...credentials].sort());
    expect(fileSettings.map((v) => v.split('=')[0])).toEqual(
      expect.arrayContaining(['TICKETD_BACKENDS_FILE', 'TICKETD_ADMIN_TOKEN_FILE', 'TICKETD_CLIENT_TOKENS_FILE']),
    );
    // The example environment file holds no secret setting.
    expect(readFileSync('deploy/systemd/ticketd.env.example', 'utf8')).not.toMatch(
      /^(TICKETD_BACKENDS|TICKETD_ADMIN_TOKEN|TICKETD_CLIENT_TOKENS|TICKETD_TLS_KEY)=/m,
    );
  });

  if (!available) {
    console.log(
      `systemd-unit: no systemd-analyze (apt-get install systemd); verify and security did not run${ci ? ', and CI is set' : ''}`,
    );
    if (ci) it('has systemd-analyze in CI', () => expect(available).toBe(true));
    return;
  }

  const dir = mkdtempSync(join(tmpdir(), 'ticketd-systemd-'));
  const unit = join(dir, 'ticketd.service');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("passes systemd-analyze verify (a copy whose ExecStart is this checkout's built CLI)", () => {
    const cli = resolve('dist/cli/main.js');
    accessSync(cli, constants.X_OK);
    expect(values('ExecStart')).toEqual(['/opt/ticketd/node_modules/.bin/ticketd serve']);
    writeFileSync(unit, unitText.replace(/^ExecStart=\S+/m, `ExecStart=${cli}`));
    const result = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8', cwd: dir });
    expect(result.stderr.trim()).toBe('');
    expect(result.status).toBe(0);
  });

  it('has a low exposure score in systemd-analyze security', () => {
    const result = spawnSync('systemd-analyze', ['security', '--offline=yes', '--no-pager', unit], {
      encoding: 'utf8',
      cwd: dir,
    });
    expect(result.status).toBe(0);
    const score = /Overall exposure level for ticketd\.service: ([\d.]+) (\w+)/.exec(result.stdout);
    expect(score).not.toBeNull();
    console.log(
      `systemd-analyze security: ticketd.service exposure ${score![1]} ${score![2]} (0 is the least exposed, 10 the most)`,
    );
    expect(Number(score![1])).toBeLessThan(2.5);
  });
});
