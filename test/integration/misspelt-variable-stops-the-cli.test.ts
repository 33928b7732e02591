/**
 * The built CLI refuses a misspelt TICKETD_* variable before any command runs: one line naming it and
 * the known name nearest to it, exit 2, for `serve` and for the other commands alike; the known
 * variables of its neighbours (the healthcheck's, the clients') pass.
 */
import { runCli } from '../support/ticketd.js';

describe('a misspelt TICKETD_* variable stops the CLI', () => {
  it.each([['serve'], ['check'], ['sequences', 'list']])(
    'refuses it for %s, naming the nearest known one',
    (...args) => {
      const run = runCli(args, { TICKETD_BACKENDS: 'mysql://127.0.0.1:1/ticketd', TICKETD_ADMN_TOKEN: 'x'.repeat(20) });
      expect(run.status).toBe(2);
      expect(run.stderr.split('\n')).toEqual([
        'ticketd: TICKETD_ADMN_TOKEN is not a ticketd setting (did you mean TICKETD_ADMIN_TOKEN?); unset it or fix its name (TICKETD_CONFIG_INVALID)',
      ]);
    },
  );

  it("lets the neighbours' variables through: the command goes on to its own checks", () => {
    const run = runCli(['serve'], {
      TICKETD_HEALTHCHECK_CERT: '/nowhere',
      TICKETD_URL: 'http://127.0.0.1:8080',
      TICKETD_PORT: 'not-a-port',
    });
    expect(run.status).toBe(2);
    expect(run.stderr).not.toContain('is not a ticketd setting');
    expect(run.stderr).toContain('TICKETD_PORT must be an integer');
  });
});
