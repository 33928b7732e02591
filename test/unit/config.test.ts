import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, readConfigFile } from '../../src/config/load-config.js';
import { ConfigError } from '../../src/core/errors.js';

describe('loadConfig', () => {
  it('parses backends, port and token; flags win over env', () => {
    const config = loadConfig(
      { backends: 'mysql://u:secret@db-a:3307/ticketd,mysql://db-b/ticketd', port: '9000', adminToken: 'x'.repeat(20) },
      { port: '9100' },
    );
    expect(config.port).toBe(9100);
    expect(config.backends.map((b) => b.label)).toEqual(['mysql://db-a:3307/ticketd', 'mysql://db-b/ticketd']);
    expect(config.backends[0]!.password).toBe('secret');
    expect(config.backends[1]!.port).toBe(3306);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('advertises the address it listens on to its peers, loopback when it listens everywhere, and TICKETD_ADVERTISE_HOST first', () => {
    const backends = 'mysql://db:3306/ticketd';
    expect(loadConfig({ backends }).advertiseHost).toBe('127.0.0.1');
    expect(loadConfig({ backends, host: '0.0.0.0' }).advertiseHost).toBe('127.0.0.1');
    expect(loadConfig({ backends, host: '10.0.0.5' }).advertiseHost).toBe('10.0.0.5');
    expect(loadConfig({ backends, host: '::1' }).advertiseHost).toBe('[::1]');
    expect(loadConfig({ backends, host: '10.0.0.5', advertiseHost: 'fe1.internal' }).advertiseHost).toBe(
      'fe1.internal',
    );
    // The peer listeners bind loopback without TICKETD_HOST: an address other hosts reach would lead nowhere.
    expect(() => loadConfig({ backends, advertiseHost: 'fe1.internal' })).toThrow(
      'TICKETD_ADVERTISE_HOST=fe1.internal is reached from other hosts, but without TICKETD_HOST the peer listeners bind 127.0.0.1 only',
    );
    expect(loadConfig({ backends, advertiseHost: '127.0.0.2' }).advertiseHost).toBe('127.0.0.2');
  });

  it('never lets the password reach JSON or a log', () => {
    const config = loadConfig({ backends: 'mysql://u:hunter2@db:3306/ticketd' });
    expect(JSON.stringify(config)).not.toContain('hunter2');
  });

  it('reports every bad setting in one line, naming each', () => {
    let error: unknown;
    try {
      loadConfig({ backends: 'postgres://db/x,mysql://db', port: 'eighty', adminToken: 'short' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    expect(message).toMatch(/TICKETD_BACKENDS: postgres:\/\/db\/x has scheme postgres/);
    expect(message).toMatch(/TICKETD_BACKENDS: mysql:\/\/db must name a database/);
    expect(message).toMatch(/TICKETD_PORT must be an integer/);
    expect(message).toMatch(/TICKETD_ADMIN_TOKEN must be at least 16 characters/);
  });

  it('requires TICKETD_BACKENDS and refuses duplicates', () => {
    expect(() => loadConfig({})).toThrow(/TICKETD_BACKENDS is not set/);
    expect(() => loadConfig({ backends: 'mysql://db/t,mysql://db:3306/t' })).not.toThrow();
    expect(() => loadConfig({ backends: 'mysql://db:3306/t,mysql://db:3306/t' })).toThrow(/more than once/);
  });
});

describe('loadConfig: the rest of the settings', () => {
  const backends = 'mysql://db-a/ticketd,mysql://db-b/ticketd';

  it('takes a config file below env and flags, and refuses unknown keys in it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ticketd-config-'));
    const path = join(dir, 'ticketd.json');
    writeFileSync(
      path,
      JSON.stringify({
        backends: ['mysql://db-a/ticketd', 'mysql://db-b/ticketd'],
        port: 9000,
        maxCount: 500,
        clientTokens: { orders: ['o'.repeat(16)] },
      }),
    );
    const file = readConfigFile(path);
    const config = loadConfig({ port: '9100' }, {}, file);
    expect(config.port).toBe(9100);
    expect(config.backends).toHaveLength(2);
    expect(config.maxCount).toBe(500);
    expect(config.clientTokens.get('orders')).toEqual([{ name: 'client-1', token: 'o'.repeat(16) }]);
    writeFileSync(path, JSON.stringify({ backend: 'x' }));
    expect(() => readConfigFile(path)).toThrow(
      /TICKETD_CONFIG: .* has unknown setting\(s\) backend; allowed: backends/,
    );
    writeFileSync(path, '{not json');
    expect(() => readConfigFile(path)).toThrow(/TICKETD_CONFIG: cannot read .* as JSON/);
    rmSync(dir, { recursive: true });
  });

  it('parses client tokens from sequence:token pairs, and names what is wrong with them', () => {
    const config = loadConfig({
      backends,
      clientTokens: `orders:${'a'.repeat(16)},orders:${'b'.repeat(16)},*:${'c'.repeat(20)}`,
    });
    expect(config.clientTokens.get('orders')).toHaveLength(2);
    expect(config.clientTokens.get('*')).toEqual([{ name: 'client-3', token: 'c'.repeat(20) }]);
    expect(() => loadConfig({ backends, clientTokens: 'orders:short' })).toThrow(
      /TICKETD_CLIENT_TOKENS tokens must be at least 16 characters/,
    );
    expect(() => loadConfig({ backends, clientTokens: `Bad:${'a'.repeat(16)}` })).toThrow(
      /TICKETD_CLIENT_TOKENS names sequence "Bad"/,
    );
    expect(() => loadConfig({ backends, clientTokens: 'no-colon' })).toThrow(/sequence:token/);
  });

  it('checks rate limit, max count, workers and log level, reporting them together', () => {
    const config = loadConfig({ backends, rateLimit: '2.5', maxCount: '100', workers: '4', logLevel: 'debug' });
    expect(config).toMatchObject({ rateLimitPerSecond: 2.5, maxCount: 100, workers: 4, logLevel: 'debug' });
    const defaults = loadConfig({ backends });
    expect(defaults).toMatchObject({ rateLimitPerSecond: undefined, maxCount: 10_000, workers: 1, logLevel: 'info' });
    let message = '';
    try {
      loadConfig({ backends, rateLimit: '-1', maxCount: '0', workers: 'many', logLevel: 'loud' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/TICKETD_RATE_LIMIT must be a positive number of requests per second; got "-1"/);
    expect(message).toMatch(/TICKETD_MAX_COUNT must be an integer from 1 to 1000000; got "0"/);
    expect(message).toMatch(/TICKETD_WORKERS must be an integer from 1 to 64; got "many"/);
    expect(message).toMatch(
      /TICKETD_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got "loud"/,
    );
  });

  it('takes the runs-out warning in days and the Snowflake epoch and time bits, naming each bad one', () => {
    const backends = 'mysql://db:3306/ticketd';
    expect(loadConfig({ backends }).runsOutWarningSeconds).toBe(14 * 86_400);
    expect(loadConfig({ backends, runsOutWarningDays: '0.5' }).runsOutWarningSeconds).toBe(43_200);
    expect(loadConfig({ backends }).snowflakeLayout).toEqual({ epochMs: Date.UTC(2024, 0, 1), timeBits: undefined });
    expect(
      loadConfig({ backends, snowflakeEpoch: '2015-01-01T00:00:00Z', snowflakeTimeBits: '39' }).snowflakeLayout,
    ).toEqual({ epochMs: Date.UTC(2015, 0, 1), timeBits: 39 });
    expect(loadConfig({ backends, snowflakeEpoch: '1288834974657' }).snowflakeLayout.epochMs).toBe(1288834974657);
    expect(() =>
      loadConfig({ backends, runsOutWarningDays: '0', snowflakeEpoch: 'yesterday', snowflakeTimeBits: '49' }),
    ).toThrow(
      /TICKETD_RUNS_OUT_WARNING_DAYS must be a number of days above 0.*got "?0"?.*TICKETD_SNOWFLAKE_EPOCH must be .*TICKETD_SNOWFLAKE_TIME_BITS must be an integer from 1 to 48/,
    );
  });

  it('names a value given as a flag by its flag, and one from the environment by its variable', () => {
    expect(() => loadConfig({ backends }, { workers: '0' })).toThrow(
      /^--workers must be an integer from 1 to 64; got "0"$/,
    );
    expect(() => loadConfig({ backends, workers: '0' })).toThrow(
      /^TICKETD_WORKERS must be an integer from 1 to 64; got "0"$/,
    );
    expect(() => loadConfig({ backends }, { maxCount: 'x', logLevel: 'loud' })).toThrow(
      /^--max-count must be .*; --log-level must be one of/,
    );
  });

  it('names the setting when a config file gives a value of the wrong type', () => {
    expect(() => loadConfig({}, {}, { backends, port: true as unknown as number })).toThrow(/^TICKETD_PORT: /);
  });

  it('requires TICKETD_ADMIN_BACKENDS to name the same servers in the same order', () => {
    const config = loadConfig({
      backends: 'mysql://app:x@db-a/ticketd,mysql://app:x@db-b/ticketd',
      adminBackends: 'mysql://admin:y@db-a/ticketd,mysql://admin:y@db-b/ticketd',
    });
    expect(config.adminBackends.map((b) => b.user)).toEqual(['admin', 'admin']);
    expect(() => loadConfig({ backends, adminBackends: 'mysql://db-b/ticketd,mysql://db-a/ticketd' })).toThrow(
      /TICKETD_ADMIN_BACKENDS must name the same servers as TICKETD_BACKENDS, in the same order/,
    );
  });

  it('takes TICKETD_CLAIMS preferred (default) or required, and refuses required with one backend', () => {
    expect(loadConfig({ backends }).claims).toBe('preferred');
    expect(loadConfig({ backends, claims: 'required' }).claims).toBe('required');
    expect(() => loadConfig({ backends, claims: 'always' })).toThrow(
      /TICKETD_CLAIMS must be preferred or required; got "always"/,
    );
    expect(() => loadConfig({ backends: 'mysql://db-a/ticketd', claims: 'required' })).toThrow(
      /TICKETD_CLAIMS=required needs at least two backends .* has 1$/,
    );
  });
});
