/**
 * docs/production.md's commands, run: every ```sh block of the page, in order, in one bash session
 * in an empty folder outside the repository, against two launcher MariaDB servers that require
 * TLS. The first block (marked `production-page: fleet`) sets the fleet's variables; the test puts
 * its own servers, passwords and certificates there instead. Every other block runs as written,
 * except those marked `production-page: not run (…)`, which must name the test that checks them
 * another way. What the page leaves to the operator's own files, the test writes: the
 * administrators' client options (root-a.cnf, root-b.cnf), accounts.sql (the statements of
 * operating.md's "Accounts and GRANTs" with the passwords filled in) and the release's tarball.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/launcher/local-mysql.js';
import { startLocalPair, type LocalPair } from '../../src/launcher/local-pair.js';
import { packRelease, runAsync } from '../support/packed-release.js';
import { makeCertificates, tlsServerArgs, type TestCertificates } from '../support/tls-certs.js';

interface Block {
  readonly line: number;
  readonly marker: string | undefined;
  readonly text: string;
}

/** The page's ```sh blocks, each with the `production-page:` marker of the line above it, if any. */
function shellBlocks(page: string): Block[] {
  const lines = page.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```sh') continue;
    const end = lines.indexOf('```', i + 1);
    const above = lines[i - 1] ?? '';
    blocks.push({
      line: i + 1,
      marker: /<!-- production-page: (.*) -->/.exec(above)?.[1],
      text: lines.slice(i + 1, end).join('\n'),
    });
    i = end;
  }
  return blocks;
}

/** operating.md's account statements, with each account's password filled in. */
function accountsSql(passwords: Record<string, string>): string {
  const operating = readFileSync('docs/operating.md', 'utf8');
  const section = operating.slice(operating.indexOf('## Accounts and GRANTs'));
  const sql = /```sql\n([\s\S]*?)```/.exec(section)?.[1];
  if (sql === undefined) throw new Error('docs/operating.md has no sql block under "Accounts and GRANTs"');
  return sql.replace(/'(\w+)'@'%' IDENTIFIED BY '…'/g, (_, user: string) => {
    const password = passwords[user];
    if (password === undefined) throw new Error(`operating.md creates an account the page does not name: ${user}`);
    return `'${user}'@'%' IDENTIFIED BY '${password}'`;
  });
}

const page = readFileSync('docs/production.md', 'utf8');
const blocks = shellBlocks(page);
const tools = ['bash', 'mysql', 'mysqldump', 'curl', 'openssl', 'promtool', 'systemd-analyze', 'npm'];
const missing = tools.filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
const ci = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

describe('docs/production.md', () => {
  it('marks its first block as the fleet, and names the test behind every block it does not run', () => {
    expect(blocks.length).toBeGreaterThan(10);
    expect(blocks[0]!.marker).toBe('fleet');
    const skipped = blocks.filter((b) => b.marker?.startsWith('not run'));
    for (const block of skipped) {
      const named = /(test\/(?:unit|integration)\/[\w-]+\.test\.ts)/.exec(block.marker!)?.[1];
      expect([block.line, named !== undefined && existsSync(named)]).toEqual([block.line, true]);
    }
    expect(
      blocks.filter((b) => b.marker !== undefined && b.marker !== 'fleet' && !b.marker.startsWith('not run')),
    ).toEqual([]);
    console.log(
      `production page: ${blocks.length} shell blocks; not run here: ${skipped.map((b) => `line ${b.line} (${/not run \(([^)]*)\)/.exec(b.marker!)?.[1]})`).join(', ')}`,
    );
  });

  if (missing.length > 0) {
    console.log(
      `production page: its commands did not run: ${missing.join(', ')} not on PATH${ci ? ', and CI is set' : ''}`,
    );
    if (ci) it('has every tool the page uses in CI', () => expect(missing).toEqual([]));
    return;
  }

  describe('run against launcher backends with TLS', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ticketd-production-'));
    const work = join(dir, 'opt-ticketd');
    let certs: TestCertificates | undefined;
    let pair: LocalPair | undefined;

    afterAll(async () => {
      await pair?.stop();
      certs?.dispose();
      rmSync(dir, { recursive: true, force: true });
    });

    it('runs every command of the page, in order, and each does what the page says', async () => {
      certs = makeCertificates();
      pair = await startLocalPair(join(dir, 'backends'), undefined, {}, tlsServerArgs(certs));
      mkdirSync(work);
      await packRelease(work);
      for (const [name, server] of [
        ['a', pair.a],
        ['b', pair.b],
      ] as const) {
        writeFileSync(
          join(work, `root-${name}.cnf`),
          `[client]\nhost=127.0.0.1\nport=${server.port}\nuser=root\nssl-ca=${certs.ca}\n`,
        );
      }
      const passwords = { ticketd: 'serve-pass-0123456789', ticketd_admin: 'admin-pass-0123456789' };
      writeFileSync(join(work, 'accounts.sql'), accountsSql(passwords));
      const fleet = [
        `export A_HOST=127.0.0.1 A_PORT=${pair.a.port} B_HOST=127.0.0.1 B_PORT=${pair.b.port}`,
        `export SERVE_PASSWORD=${passwords.ticketd} ADMIN_PASSWORD=${passwords.ticketd_admin}`,
        `export A_CA=${certs.ca} B_CA=${certs.ca}`,
        `export HTTPS_CERT=${certs.server.cert} HTTPS_KEY=${certs.server.key} HTTPS_CA=${certs.ca}`,
        'export HOST_ADDRESS=127.0.0.1 HTTPS_NAME=localhost',
        `export TICKETD_PORT=${await freePort()}`,
      ].join('\n');
      const script = [
        'set -euo pipefail',
        ...blocks.flatMap((b, i) =>
          b.marker?.startsWith('not run') ? [] : [`echo '### block ${i} (line ${b.line})'`, i === 0 ? fleet : b.text],
        ),
      ].join('\n');
      writeFileSync(join(dir, 'page.sh'), script);

      const started = Date.now();
      // The npm cache first (npm ci filled it), the registry for what it lacks: npm's own setting, the page's command unchanged.
      const result = await runAsync(
        'bash',
        [join(dir, 'page.sh')],
        work,
        { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, npm_config_prefer_offline: 'true' },
        240_000,
      );
      const output = result.stdout + result.stderr;
      if (result.status !== 0)
        throw new Error(`the page's commands exited with ${result.status}:\n${output.slice(-4000)}`);
      console.log(
        `production page: ${blocks.filter((b) => !b.marker?.startsWith('not run')).length} blocks ran in ${((Date.now() - started) / 1000).toFixed(0)} s`,
      );

      const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
      expect(result.stdout).toContain(`\n${version}\n`);
      // Option files: increment 16, offsets 1 and 2, crash-safe.
      expect(result.stdout).toMatch(/\t16\t1\t1\t1\n[\s\S]*\t16\t2\t1\t1\n/);
      // The IDs over HTTPS with the client token.
      const ids = /\{"sequence":"default","ids":\[("\d+",?){3}\]\}/.exec(result.stdout);
      expect(ids).not.toBeNull();
      // A token that is not one of ours is refused (and audit-logged, in ticketd.log).
      expect(result.stdout).toMatch(/"status":403,[^}]*"code":"TICKETD_FORBIDDEN"/);
      expect(readFileSync(join(work, 'ticketd.log'), 'utf8')).toMatch(/^\{.*"msg"/m);
      expect(result.stdout).toMatch(/Overall exposure level for ticketd\.service: [\d.]+/);
      expect(result.stdout + result.stderr).toMatch(/SUCCESS/); // promtool check rules
      expect(readFileSync(join(work, 'ticketd-a.sql'), 'utf8')).toMatch(/CREATE TABLE `ticketd_sequences`/);
      // The credentials stayed private (umask 077).
      expect(
        spawnSync('stat', ['-c', '%a', join(work, 'credentials', 'admin-token')], { encoding: 'utf8' }).stdout.trim(),
      ).toBe('600');
      // The serving account is the least-privilege one: it may not create a table.
      const denied = spawnSync(
        'mysql',
        [
          `--defaults-extra-file=${join(work, 'root-a.cnf')}`,
          '-u',
          'ticketd',
          `-p${passwords.ticketd}`,
          'ticketd',
          '-e',
          'CREATE TABLE t (i INT)',
        ],
        { encoding: 'utf8' },
      );
      expect(denied.stderr).toMatch(/denied/i);
      console.log(`production page: IDs over HTTPS ${ids![0]}`);
    }, 300_000);
  });
});
