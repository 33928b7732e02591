/** `ticketd workers create|list|show` on the shared pair, beside a serving ticketd that grants leases. */
import type { RunningTicketd } from '../../src/server.js';
import { runCli as ticketd, sharedBackends, startInProcess } from '../support/ticketd.js';
import { poolName, takeLease } from '../support/worker-pools.js';

describe('ticketd workers', () => {
  let server: RunningTicketd;

  beforeAll(async () => {
    server = await startInProcess(sharedBackends());
  });

  afterAll(async () => {
    await server?.close();
  });

  it('creates a pool, lists its counts and shows who holds which worker ID', async () => {
    const env = { TICKETD_BACKENDS: sharedBackends() };
    const name = poolName('cli');
    const created = ticketd(['workers', 'create', name, '--worker-bits', '4', '--ttl-ms', '20000'], env);
    expect(created.stderr).toBe('');
    expect(created.stdout).toMatch(
      new RegExp(
        `^pool ${name} created: 16 worker IDs \\(4 bits\\), ttl 20000 ms, max skew 1000 ms, reuse delay 21000 ms, granted by the backends with offsets 1, 2$`,
        'm',
      ),
    );
    expect(ticketd(['workers', 'create', name, '--worker-bits', '4', '--ttl-ms', '20000'], env).stdout).toMatch(
      /already exists with these settings/,
    );
    const conflict = ticketd(['workers', 'create', name, '--worker-bits', '5'], env);
    expect(conflict.status).toBe(1);
    expect(conflict.stderr).toMatch(/\(TICKETD_POOL_CONFLICT\)$/);
    const bad = ticketd(['workers', 'create', name, '--ttl-ms', 'soon'], env);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe('ticketd: --ttl-ms must be a whole number; got "soon" (TICKETD_CONFIG_INVALID)');
    const lease = (await takeLease(server.url, name, 'pod-a')).body;
    const list = ticketd(['workers', 'list'], env);
    expect(list.stdout).toMatch(
      new RegExp(
        `^${name}\\tsize=16\\tleased=1\\tcooling=0\\tfree=15\\tttlMs=20000\\tmaxSkewMs=1000\\treuseDelayMs=21000$`,
        'm',
      ),
    );
    const show = ticketd(['workers', 'show', name], env);
    expect(show.stdout).toMatch(
      new RegExp(`^worker ${String(lease.workerId)}\\tleased\\tepoch=${String(lease.epoch)}\\tholder=pod-a\\t`, 'm'),
    );
    const missing = ticketd(['workers', 'show', 'no_such_pool'], env);
    expect(missing.stderr).toMatch(
      /^ticketd: no worker pool no_such_pool; create it with .* \(TICKETD_POOL_NOT_FOUND\)$/,
    );
  });
});
