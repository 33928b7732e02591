import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load-config.js';
import { reloadSecrets } from '../../src/config/secrets.js';
import { ConfigError } from '../../src/core/errors.js';

describe('secrets from files, several admin tokens, HTTPS settings', () => {
  let dir: string;
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ticketd-secrets-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads TICKETD_*_FILE, trimming the trailing newline, and remembers the token files for a reload', () => {
    const config = loadConfig({
      backendsFile: file('backends', 'mysql://u:secret@db-a:3306/ticketd,mysql://db-b/ticketd\n'),
      adminTokenFile: file('admin', 'admin-token-0123456789\n'),
      clientTokensFile: file('clients', 'orders:client-token-0123456789\n'),
    });
    expect(config.backends.map((b) => b.label)).toEqual(['mysql://db-a:3306/ticketd', 'mysql://db-b/ticketd']);
    expect(config.backends[0]!.password).toBe('secret');
    expect(config.adminTokens).toEqual([{ name: 'admin-1', token: 'admin-token-0123456789' }]);
    expect(config.clientTokens.get('orders')).toEqual([{ name: 'client-1', token: 'client-token-0123456789' }]);
    expect(config.secretFiles).toEqual({ adminToken: join(dir, 'admin'), clientTokens: join(dir, 'clients') });
  });

  it('refuses a setting given both ways, and a file it cannot read, naming each in one line', () => {
    let error: unknown;
    try {
      loadConfig({
        backends: 'mysql://db/ticketd',
        adminToken: 'admin-token-0123456789',
        adminTokenFile: file('admin', 'other-token-0123456789'),
        clientTokensFile: join(dir, 'missing'),
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    expect(message).toMatch(
      /TICKETD_ADMIN_TOKEN and TICKETD_ADMIN_TOKEN_FILE are both set: give the value or the file, not both/,
    );
    expect(message).toMatch(/TICKETD_CLIENT_TOKENS_FILE: \S+missing cannot be read \(ENOENT\)/);
  });

  it('takes several comma-separated admin tokens, each held to the minimum length', () => {
    expect(
      loadConfig({ backends: 'mysql://db/ticketd', adminToken: 'old-admin-token-0123, new-admin-token-0123' })
        .adminTokens,
    ).toEqual([
      { name: 'admin-1', token: 'old-admin-token-0123' },
      { name: 'admin-2', token: 'new-admin-token-0123' },
    ]);
    expect(() => loadConfig({ backends: 'mysql://db/ticketd', adminToken: 'old-admin-token-0123,short' })).toThrow(
      /TICKETD_ADMIN_TOKEN must be at least 16 characters \(each, when several are given\); got 5/,
    );
    expect(loadConfig({ backends: 'mysql://db/ticketd' }).adminTokens).toEqual([]);
  });

  it('reloads the token files, keeping inline settings, and refuses a bad file without a partial change', () => {
    const admin = file('admin', 'admin-token-0123456789\n');
    const config = loadConfig({
      backends: 'mysql://db/ticketd',
      adminTokenFile: admin,
      clientTokens: 'orders:client-token-0123456789',
    });
    const current = { adminTokens: config.adminTokens, clientTokens: config.clientTokens };
    writeFileSync(admin, 'admin-token-0123456789,rotated-token-0123456789\n');
    const next = reloadSecrets(config.secretFiles, current);
    expect(next.adminTokens.map((t) => t.token)).toEqual(['admin-token-0123456789', 'rotated-token-0123456789']);
    expect(next.clientTokens).toBe(current.clientTokens);
    writeFileSync(admin, 'short\n');
    expect(() => reloadSecrets(config.secretFiles, next)).toThrow(/TICKETD_ADMIN_TOKEN must be at least 16 characters/);
    rmSync(admin);
    expect(() => reloadSecrets(config.secretFiles, next)).toThrow(
      /TICKETD_ADMIN_TOKEN_FILE: \S+admin cannot be read \(ENOENT\)/,
    );
  });

  it('takes TICKETD_TLS_CERT and TICKETD_TLS_KEY together, and a client CA only with them', () => {
    const cert = file('cert.pem', 'x');
    const key = file('key.pem', 'x');
    expect(loadConfig({ backends: 'mysql://db/ticketd', tlsCert: cert, tlsKey: key }).tls).toEqual({
      cert,
      key,
      clientCa: undefined,
    });
    expect(() => loadConfig({ backends: 'mysql://db/ticketd', tlsCert: cert })).toThrow(
      /TICKETD_TLS_CERT and TICKETD_TLS_KEY go together/,
    );
    expect(() => loadConfig({ backends: 'mysql://db/ticketd', tlsClientCa: cert })).toThrow(
      /TICKETD_TLS_CLIENT_CA needs TICKETD_TLS_CERT and TICKETD_TLS_KEY/,
    );
    expect(() => loadConfig({ backends: 'mysql://db/ticketd', tlsCert: join(dir, 'nope.pem'), tlsKey: key })).toThrow(
      /TICKETD_TLS_CERT: \S+nope\.pem cannot be read \(ENOENT\)/,
    );
    expect(loadConfig({ backends: 'mysql://db/ticketd' }).tls).toBeUndefined();
  });
});
