/**
 * Named tokens (TICKETD_ADMIN_TOKEN `name=token`, TICKETD_CLIENT_TOKENS `sequence:name=token`), and
 * the caller a request's Authorization header stands for: its name and scopes, never its secret.
 */
import { loadConfig } from '../../src/config/load-config.js';
import { Credentials } from '../../src/http/credentials.js';

const backends = 'mysql://db-a/ticketd,mysql://db-b/ticketd';
const OPS = 'ops-admin-token-0123456789';
const ROTATED = 'rotated-admin-token-0123456789';
const BILLING = 'billing-client-token-0123';
const ANY = 'any-sequence-token-012345';

describe('named tokens', () => {
  it('reads name=token, names a bare token admin-N or client-N, and keeps the token rules', () => {
    const config = loadConfig({
      backends,
      adminToken: `ops=${OPS}, ${ROTATED}`,
      clientTokens: `orders:billing=${BILLING},orders:${'x'.repeat(16)},*:${ANY}`,
    });
    expect(config.adminTokens).toEqual([
      { name: 'ops', token: OPS },
      { name: 'admin-1', token: ROTATED },
    ]);
    expect(config.clientTokens.get('orders')).toEqual([
      { name: 'billing', token: BILLING },
      { name: 'client-1', token: 'x'.repeat(16) },
    ]);
    expect(config.clientTokens.get('*')).toEqual([{ name: 'client-2', token: ANY }]);
    expect(() => loadConfig({ backends, adminToken: 'ops=short-token' })).toThrow(
      /TICKETD_ADMIN_TOKEN must be at least 16 characters .*got 11 \(token ops;/,
    );
    expect(() => loadConfig({ backends, clientTokens: 'orders:billing=short' })).toThrow(
      /TICKETD_CLIENT_TOKENS tokens must be at least 16 characters .*\(token billing;/,
    );
    // The message names the token, never shows it.
    expect(() => loadConfig({ backends, clientTokens: 'orders:billing=short' })).not.toThrow(/short/);
  });

  it("keeps a bare base64 token's trailing padding, and a = after something that is no name, in the token", () => {
    const padded = 'abcdefghij0123456789==';
    const upper = 'NotAName=0123456789abcdef';
    const config = loadConfig({ backends, adminToken: `${padded},${upper}` });
    expect(config.adminTokens).toEqual([
      { name: 'admin-1', token: padded },
      { name: 'admin-2', token: upper },
    ]);
  });

  it('takes names in the JSON form of a file too', () => {
    const config = loadConfig({ backends, clientTokens: { orders: [`billing=${BILLING}`] } });
    expect(config.clientTokens.get('orders')).toEqual([{ name: 'billing', token: BILLING }]);
  });

  it('makes a caller of an Authorization header: the name and scopes of its token, or anonymous or unknown', () => {
    const config = loadConfig({
      backends,
      adminToken: `ops=${OPS}`,
      clientTokens: `orders:billing=${BILLING},invoices:billing=${BILLING},*:${ANY}`,
    });
    const credentials = new Credentials(config);
    const ops = credentials.callerOf(`Bearer ${OPS}`);
    expect(ops).toMatchObject({ name: 'ops', admin: true, peer: false });
    const billing = credentials.callerOf(`Bearer ${BILLING}`);
    expect({ ...billing, clientOf: [...billing.clientOf].sort() }).toMatchObject({
      name: 'billing',
      admin: false,
      clientOf: ['invoices', 'orders'],
    });
    expect(credentials.callerOf(undefined)).toMatchObject({ name: 'anonymous', admin: false });
    expect(credentials.callerOf(`Basic ${OPS}`)).toMatchObject({ name: 'anonymous', admin: false });
    const stranger = credentials.callerOf('Bearer not-a-configured-token-000');
    expect(stranger).toMatchObject({ name: 'unknown', admin: false });
    // No caller holds its secret: only a digest, for the rate limit's bucket.
    for (const caller of [ops, billing, stranger]) {
      const text = JSON.stringify({ ...caller, clientOf: [...caller.clientOf] });
      for (const secret of [OPS, BILLING, 'not-a-configured-token-000']) expect(text).not.toContain(secret);
    }
    expect(credentials.guarded('orders')).toBe(true);
    expect(credentials.hasOwnTokens('orders')).toBe(true);
    expect(credentials.hasOwnTokens('other')).toBe(false);
    expect(credentials.names).toEqual(['ops', 'billing', 'client-1']);
  });
});
