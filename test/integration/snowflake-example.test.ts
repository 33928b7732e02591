/** The README's Snowflake example is examples/sdk/snowflake.mjs, word for word, and it runs as a newcomer would run it. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import type { RunningTicketd } from '../../src/server.js';
import { sharedBackends, startInProcess } from '../support/ticketd.js';
import { putPool, send } from '../support/worker-pools.js';

describe('the README Snowflake example', () => {
  let server: RunningTicketd;

  beforeAll(async () => {
    server = await startInProcess(sharedBackends());
  });

  afterAll(async () => {
    await server?.close();
  });

  it('is the example file, mints two IDs on a leased worker ID, and gives the worker ID back', async () => {
    const readme = readFileSync('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('\n## Snowflake worker IDs\n'), readme.indexOf('\n## With Docker\n'));
    const js = /```js\n([\s\S]*?)```/.exec(section)?.[1];
    expect(js).toBe(readFileSync('examples/sdk/snowflake.mjs', 'utf8'));
    // The pool the demo makes, with the settings the README's create command gives it.
    expect([200, 201]).toContain((await putPool(server.url, 'web', { workerBits: 10, ttlMs: 30000 })).status);
    // Asynchronously: the server answering it runs in this process.
    const ran = await promisify(execFile)(process.execPath, ['examples/sdk/snowflake.mjs'], {
      env: { ...process.env, TICKETD_URL: server.url },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(ran.stderr).toBe('');
    const match = /^web: (\d+) then (\d+) \(worker (\d+), (\S+), sequence (\d+)\)\n$/.exec(ran.stdout);
    expect(match).not.toBeNull();
    expect(BigInt(match![2]!)).toBeGreaterThan(BigInt(match![1]!));
    expect(Math.abs(Date.parse(match![4]!) - Date.now())).toBeLessThan(20_000);
    const pool = await send(`${server.url}/v1/worker-pools/web`, undefined, { method: 'GET' });
    expect(pool.body.leased).toBe(0);
  });
});
