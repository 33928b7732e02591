import type { RunningTicketd } from '../../src/server.js';
import { putSequence, runCli, sharedBackends, sqlOn, startInProcess } from '../support/ticketd.js';
import { poolName, putPool, send, takeLease } from '../support/worker-pools.js';

// The GRANTs the README documents, on the shared pair: a serving account and an admin account.
const GRANTS = [
  "CREATE USER IF NOT EXISTS 'tk_serve'@'%' IDENTIFIED BY 'serve-pass'",
  "GRANT SELECT, INSERT, DELETE ON ticketd.* TO 'tk_serve'@'%'",
  "CREATE USER IF NOT EXISTS 'tk_admin'@'%' IDENTIFIED BY 'admin-pass'",
  "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER ON ticketd.* TO 'tk_admin'@'%'",
];

describe('least-privilege accounts', () => {
  const roots = (): string[] => sharedBackends().split(',');
  const as = (user: string, pass: string): string =>
    roots()
      .map((u) => {
        const url = new URL(u);
        url.username = user;
        url.password = pass;
        return url.toString();
      })
      .join(',');
  let serving: RunningTicketd;
  let withAdmin: RunningTicketd;

  beforeAll(async () => {
    for (const url of roots()) await sqlOn(url, ...GRANTS);
    serving = await startInProcess(as('tk_serve', 'serve-pass'));
    withAdmin = await startInProcess(as('tk_serve', 'serve-pass'), { adminBackends: as('tk_admin', 'admin-pass') });
  });
  afterAll(async () => {
    await serving?.close();
    await withAdmin?.close();
    for (const url of roots()) await sqlOn(url, "DROP USER IF EXISTS 'tk_serve'@'%'", "DROP USER IF EXISTS 'tk_admin'@'%'");
  });

  it('the serving account issues IDs and claims them with INSERT, DELETE and SELECT alone', async () => {
    const res = await fetch(`${serving.url}/v1/sequences/default/ids?count=100`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { ids: string[] }).ids).toHaveLength(100);
  });

  it('the serving account takes, renews and releases worker-ID leases with the same grants', async () => {
    const pool = poolName('least_priv');
    expect((await putPool(serving.url, pool, { workerBits: 2 })).status).toBe(201);
    const lease = await takeLease(serving.url, pool, 'pod-a');
    expect(lease.status).toBe(200);
    const base = `${serving.url}/v1/worker-pools/${pool}/leases/${String(lease.body.workerId)}`;
    expect((await send(`${base}/renew`, { epoch: lease.body.epoch })).status).toBe(200);
    expect((await send(`${base}/release`, { epoch: lease.body.epoch, lastUsedMs: Date.now() })).status).toBe(200);
  });

  it('schema changes need the admin account: refused on the serving one, done with TICKETD_ADMIN_BACKENDS', async () => {
    const refused = await fetch(`${serving.url}/v1/sequences/least_priv`, {
      method: 'PUT',
      headers: { authorization: 'Bearer test-admin-token-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ blockSize: 10 }),
    });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/CREATE command denied to user 'tk_serve'.*set TICKETD_ADMIN_BACKENDS/);
    expect(await putSequence(withAdmin.url, 'least_priv', { blockSize: 10 })).toBe(201);
    const issued = await fetch(`${withAdmin.url}/v1/sequences/least_priv/ids?count=5`, { method: 'POST' });
    expect(issued.status).toBe(200);
  });

  it('init with only the serving account fails with the reason; with --admin-backends it succeeds', () => {
    const denied = runCli(['init'], { TICKETD_BACKENDS: as('tk_serve', 'serve-pass') });
    expect(denied.status).toBe(1);
    expect(denied.stderr).toMatch(/^ticketd: .*denied to user 'tk_serve'/);
    const ok = runCli(['init', '--admin-backends', as('tk_admin', 'admin-pass')], { TICKETD_BACKENDS: as('tk_serve', 'serve-pass') });
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
  });
});
