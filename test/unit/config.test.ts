import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';

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
