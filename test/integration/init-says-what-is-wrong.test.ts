/**
 * A backend that is running but answers with an error is not "down": init says what is wrong (the
 * database is missing; the login was refused, and why that may be MariaDB's anonymous account)
 * instead of "start it".
 */
import { runCli, sqlOn, startLegacyServer } from '../support/ticketd.js';

describe('init on a running server that refuses', () => {
  let server: Awaited<ReturnType<typeof startLegacyServer>>;

  beforeAll(async () => {
    server = await startLegacyServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  const init = (url: string): { status: number | null; stderr: string } => runCli(['init'], { TICKETD_BACKENDS: url });

  it('says the database is missing, not that the server is down', () => {
    const result = init(server.url.replace(/\/shop$/, '/nodb'));
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/is running but has no database nodb: create it \(CREATE DATABASE nodb\)/);
    expect(result.stderr).not.toMatch(/start it/);
  });

  it('says the login was refused, and names the anonymous account that shadows a new one', async () => {
    // A default MariaDB install's anonymous account: it matches a login from its host before 'app'@'%' does.
    await sqlOn(
      server.url,
      "CREATE USER 'app'@'%' IDENTIFIED BY 'right'",
      "GRANT ALL ON shop.* TO 'app'@'%'",
      "CREATE USER ''@'127.0.0.1'",
    );
    const result = init(server.url.replace(/^mysql:\/\/[^@]*@/, 'mysql://app:right@'));
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /is running but refused the login: .*Access denied for user 'app'.*anonymous account \(''@'localhost'/,
    );
    expect(result.stderr).not.toMatch(/start it/);
    // Without the anonymous account, the same login goes through (init then fails on what it checks next, not the login).
    await sqlOn(server.url, "DROP USER ''@'127.0.0.1'");
    expect(init(server.url.replace(/^mysql:\/\/[^@]*@/, 'mysql://app:right@')).stderr).not.toMatch(/refused the login/);
  });
});
