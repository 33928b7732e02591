/**
 * Who did what: every admin action over HTTP (create, widen, decode, release, retire a sequence;
 * create a worker pool) and every refused request writes one audit line naming the token by its
 * name, the action, its target and the outcome; /metrics counts requests per token name. No line
 * of the log holds a token.
 */
import type { RunningTicketd } from '../../src/server.js';
import { capturingLogger, metricSum, sharedBackends, startInProcess, TEST_ADMIN_TOKEN } from '../support/ticketd.js';
import { poolName, send } from '../support/worker-pools.js';

const SECOND_ADMIN = 'second-admin-token-0123456789';
const BILLING = 'billing-client-token-0123';
const STRANGER = 'stranger-token-0123456789';
const suffix = `${process.pid}_${Date.now() % 100000}`;
const SEQUENCE = `audited_${suffix}`;

interface AuditLine {
  readonly caller: string;
  readonly action: string;
  readonly target: string;
  readonly outcome: string;
  readonly status: number;
  readonly code?: string;
}

describe('audit log and per-token counts', () => {
  const captured = capturingLogger();
  let server: RunningTicketd;

  beforeAll(async () => {
    server = await startInProcess(
      sharedBackends(),
      { adminToken: `ops=${TEST_ADMIN_TOKEN},${SECOND_ADMIN}`, clientTokens: `${SEQUENCE}:billing=${BILLING}` },
      captured.logger,
    );
  });
  afterAll(async () => {
    await server.close();
  });

  const audits = (): AuditLine[] =>
    captured.lines.flatMap((l) => (l.audit === undefined ? [] : [l.audit as AuditLine]));
  const call = (path: string, method: string, token?: string, body?: object): Promise<Response> =>
    fetch(`${server.url}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('logs each admin action with the token name, target and outcome', async () => {
    const path = `/v1/sequences/${SEQUENCE}`;
    expect((await call(path, 'PUT', TEST_ADMIN_TOKEN, { blockSize: 10, maxId: '1000000' })).status).toBe(201);
    expect((await call(path, 'PATCH', SECOND_ADMIN, { maxId: '2000000' })).status).toBe(200);
    const issued = (await (await call(`${path}/next`, 'GET', BILLING)).json()) as { id: string };
    expect((await call(`${path}/ids/${issued.id}`, 'GET', TEST_ADMIN_TOKEN)).status).toBe(200);
    // Releasing a backend that is not quarantined still runs: its outcome is what the audit line says.
    const released = await call(`${path}/release`, 'POST', TEST_ADMIN_TOKEN, { backend: 'A' });
    const pool = poolName('audited');
    expect(
      (await send(`${server.url}/v1/worker-pools/${pool}`, { workerBits: 2 }, { method: 'PUT', admin: true })).status,
    ).toBe(201);
    expect((await call(path, 'DELETE', TEST_ADMIN_TOKEN)).status).toBe(200);
    expect(audits()).toEqual(
      expect.arrayContaining([
        { caller: 'ops', action: 'create-sequence', target: SEQUENCE, outcome: 'ok', status: 201 },
        { caller: 'admin-1', action: 'widen-sequence', target: SEQUENCE, outcome: 'ok', status: 200 },
        { caller: 'ops', action: 'decode-id', target: SEQUENCE, outcome: 'ok', status: 200 },
        {
          caller: 'ops',
          action: 'release-backend',
          target: SEQUENCE,
          outcome: released.status < 400 ? 'ok' : 'failed',
          status: released.status,
        },
        { caller: 'ops', action: 'create-worker-pool', target: pool, outcome: 'ok', status: 201 },
        { caller: 'ops', action: 'retire-sequence', target: SEQUENCE, outcome: 'ok', status: 200 },
      ]),
    );
  });

  it('logs every refused request, on the fast path and through Express, with who was refused', async () => {
    const guarded = `audited_open_${suffix}`;
    expect((await call(`/v1/sequences/${guarded}`, 'PUT', TEST_ADMIN_TOKEN, { blockSize: 10 })).status).toBe(201);
    // A client token on an admin route, no token on an admin route, a stranger's token.
    expect((await call(`/v1/sequences/${guarded}`, 'DELETE', BILLING)).status).toBe(403);
    expect((await call(`/v1/sequences/${guarded}`, 'PATCH', undefined, { maxId: '5' })).status).toBe(401);
    expect((await call(`/v1/sequences/${guarded}`, 'PUT', STRANGER, { blockSize: 10 })).status).toBe(403);
    const before = audits().length;
    await server.close();
    server = await startInProcess(
      sharedBackends(),
      { adminToken: `ops=${TEST_ADMIN_TOKEN}`, clientTokens: `${guarded}:billing=${BILLING}` },
      captured.logger,
    );
    // The fast path (GET next without a body) and Express (a block lease) refuse alike.
    expect((await call(`/v1/sequences/${guarded}/next`, 'GET')).status).toBe(401);
    expect((await call(`/v1/sequences/${guarded}/next`, 'GET', STRANGER)).status).toBe(403);
    expect((await call(`/v1/sequences/${guarded}/blocks`, 'POST', STRANGER)).status).toBe(403);
    const refusals = audits().filter((a) => a.outcome === 'refused');
    expect(refusals).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          caller: 'billing',
          action: 'DELETE /v1/sequences/:name',
          target: guarded,
          status: 403,
        }),
        expect.objectContaining({
          caller: 'anonymous',
          action: 'PATCH /v1/sequences/:name',
          target: guarded,
          status: 401,
        }),
        expect.objectContaining({ caller: 'unknown', action: 'PUT /v1/sequences/:name', target: guarded, status: 403 }),
      ]),
    );
    expect(audits().slice(before)).toEqual([
      expect.objectContaining({
        caller: 'anonymous',
        action: 'GET /v1/sequences/:name/next',
        code: 'TICKETD_UNAUTHORIZED',
      }),
      expect.objectContaining({ caller: 'unknown', action: 'GET /v1/sequences/:name/next', code: 'TICKETD_FORBIDDEN' }),
      expect.objectContaining({ caller: 'unknown', action: 'POST /v1/sequences/:name/blocks', target: guarded }),
    ]);
    // An admitted issuing request is no admin action: not logged.
    expect((await call(`/v1/sequences/${guarded}/next`, 'GET', BILLING)).status).toBe(200);
    expect(audits().slice(before)).toHaveLength(3);
  });

  it('counts requests per token name in /metrics, never by the token', async () => {
    const name = `audited_counted_${suffix}`;
    expect((await call(`/v1/sequences/${name}`, 'PUT', TEST_ADMIN_TOKEN, { blockSize: 10 })).status).toBe(201);
    const billing = await metricSum(server.url, 'ticketd_requests_by_token_total', { token: 'billing' });
    const anonymous = await metricSum(server.url, 'ticketd_requests_by_token_total', { token: 'anonymous' });
    for (let i = 0; i < 5; i++) expect((await call(`/v1/sequences/${name}/next`, 'GET', BILLING)).status).toBe(200);
    expect((await call(`/v1/sequences/${name}/ids?count=3`, 'POST', BILLING)).status).toBe(200);
    expect(await metricSum(server.url, 'ticketd_requests_by_token_total', { token: 'billing' })).toBe(billing + 6);
    // Each scrape is anonymous and counted before it is answered: the billing one, then this one.
    expect(await metricSum(server.url, 'ticketd_requests_by_token_total', { token: 'anonymous' })).toBe(anonymous + 2);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    for (const secret of [TEST_ADMIN_TOKEN, BILLING, STRANGER, SECOND_ADMIN]) expect(text).not.toContain(secret);
  });

  it('writes no token into any log line', () => {
    expect(audits().length).toBeGreaterThan(10);
    const log = captured.lines.map((l) => JSON.stringify(l)).join('\n');
    for (const secret of [TEST_ADMIN_TOKEN, BILLING, STRANGER, SECOND_ADMIN]) expect(log).not.toContain(secret);
  });
});
