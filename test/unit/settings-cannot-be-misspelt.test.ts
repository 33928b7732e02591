/**
 * Settings that cannot be misspelt or left in plain sight: an unknown TICKETD_* variable is refused
 * naming the nearest known one; every variable the project's own code, scripts and docs read is
 * known; every secret setting has a `_FILE` form; a backend's `name` is checked and unique.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KNOWN_VARIABLES, refuseUnknownVariables } from '../../src/config/known-variables.js';
import { loadConfig } from '../../src/config/load-config.js';
import { secretVariable } from '../../src/config/secrets.js';
import { ConfigError } from '../../src/core/errors.js';

/** Names misspelt on purpose, as examples (here, in known-variables.ts and docs/reference.md). */
const MISSPELT = new Set(['TICKETD_ADMN_TOKEN', 'TICKETD_BACKEND', 'TICKETD_PEER_SECRET_FIEL']);

/** The error codes: TICKETD_* names that are not variables. */
function errorCodes(): Set<string> {
  const texts = ['src/core/errors.ts', 'src/http/problem.ts', 'clients/vectors/errors.json']
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  return new Set(texts.match(/TICKETD_[A-Z0-9_]+/g) ?? []);
}

/** Every file under `dir` with one of `extensions`. */
function filesUnder(dir: string, extensions: RegExp): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (entry === 'node_modules' || entry === 'target' || entry.startsWith('.')) return [];
    if (statSync(path).isDirectory()) return filesUnder(path, extensions);
    return extensions.test(entry) ? [path] : [];
  });
}

describe('unknown TICKETD_* variables', () => {
  it('refuses a misspelt setting naming the known one nearest to it, in one line', () => {
    expect(() => refuseUnknownVariables({ TICKETD_ADMN_TOKEN: 'x' })).toThrow(ConfigError);
    expect(() => refuseUnknownVariables({ TICKETD_ADMN_TOKEN: 'x', PATH: '/bin' })).toThrow(
      'TICKETD_ADMN_TOKEN is not a ticketd setting (did you mean TICKETD_ADMIN_TOKEN?); unset it or fix its name',
    );
    expect(() => refuseUnknownVariables({ TICKETD_BACKEND: 'x' })).toThrow('did you mean TICKETD_BACKENDS?');
    expect(() => refuseUnknownVariables({ TICKETD_PEER_SECRET_FIEL: 'x' })).toThrow(
      'did you mean TICKETD_PEER_SECRET_FILE?',
    );
  });

  it('accepts every known variable, and anything not TICKETD_*', () => {
    const env = Object.fromEntries(KNOWN_VARIABLES.map((name) => [name, 'x']));
    expect(() => refuseUnknownVariables({ ...env, HOME: '/root', TICKETDX: '1' })).not.toThrow();
  });

  it('knows every TICKETD_* variable the code, scripts, examples and docs use', () => {
    const codes = errorCodes();
    const dirs = ['src', 'test', 'bench', 'examples', 'docker', 'deploy', 'docs', '.ci', 'clients', 'packages'];
    const used = new Map<string, string>();
    const files = dirs.flatMap((d) => filesUnder(d, /\.(ts|js|mjs|sh|md|ya?ml|json|py|java|go|service|env)$|^run$/));
    for (const file of files)
      for (const name of readFileSync(file, 'utf8').match(/TICKETD_[A-Z0-9_]*[A-Z0-9]/g) ?? [])
        if (!codes.has(name) && !MISSPELT.has(name) && !used.has(name)) used.set(name, file);
    // Prefixes in prose (TICKETD_BACKEND_SSL_*, TICKETD_CLIENT_*) and the codes of the clients' own errors.
    const unknown = [...used].filter(
      ([name]) =>
        !KNOWN_VARIABLES.includes(name) &&
        !/^TICKETD_(BACKEND_SSL|CLIENT)$/.test(name) &&
        !name.startsWith('TICKETD_CLIENT_'),
    );
    expect(unknown).toEqual([]);
  });
});

describe('secrets from files', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ticketd-secret-files-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const file = (name: string, content: string): string => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  it('reads TICKETD_ADMIN_BACKENDS_FILE, TICKETD_PEER_SECRET_FILE and TICKETD_SOURCE_FILE, and refuses both forms of one', () => {
    const config = loadConfig({
      backends: 'mysql://app:p1@db-a/ticketd,mysql://app:p2@db-b/ticketd',
      adminBackendsFile: file('admin', 'mysql://adm:s1@db-a/ticketd,mysql://adm:s2@db-b/ticketd\n'),
      peerSecretFile: file('peer', 'a-peer-secret-of-the-fleet\n'),
    });
    expect(config.adminBackends.map((b) => [b.user, b.password])).toEqual([
      ['adm', 's1'],
      ['adm', 's2'],
    ]);
    expect(config.peerSecret).toBe('a-peer-secret-of-the-fleet');
    expect(() =>
      loadConfig({ backends: 'mysql://db-a/ticketd', peerSecret: 'x'.repeat(20), peerSecretFile: file('p2', 'y') }),
    ).toThrow('TICKETD_PEER_SECRET and TICKETD_PEER_SECRET_FILE are both set');
    expect(
      secretVariable({ TICKETD_SOURCE_FILE: file('source', 'mysql://m:pw@legacy/shop\n') }, 'TICKETD_SOURCE'),
    ).toBe('mysql://m:pw@legacy/shop');
    expect(() =>
      secretVariable({ TICKETD_SOURCE: 'a', TICKETD_SOURCE_FILE: file('s2', 'b') }, 'TICKETD_SOURCE'),
    ).toThrow('TICKETD_SOURCE and TICKETD_SOURCE_FILE are both set');
    expect(() => loadConfig({ backends: 'mysql://db-a/ticketd', adminBackendsFile: join(dir, 'absent') })).toThrow(
      /^TICKETD_ADMIN_BACKENDS_FILE: /,
    );
  });
});

describe('backend names', () => {
  it('are letters by place, or the URL name parameter, which is checked and unique', () => {
    const config = loadConfig({ backends: 'mysql://db-a/ticketd?name=east,mysql://db-b/ticketd,mysql://db-c/ticketd' });
    expect(config.backends.map((b) => b.name)).toEqual(['east', 'B', 'C']);
    expect(() => loadConfig({ backends: 'mysql://db-a/ticketd?name=East' })).toThrow(
      'name must match ^[a-z][a-z0-9_-]{0,31}$',
    );
    expect(() => loadConfig({ backends: 'mysql://db-a/ticketd?name=east,mysql://db-b/ticketd?name=east' })).toThrow(
      'TICKETD_BACKENDS names two backends east: each name=… must be unique',
    );
  });
});
