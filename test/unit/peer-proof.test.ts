import { loadConfig } from '../../src/config/load-config.js';
import { peerProof } from '../../src/service/peer-proof.js';

const backendsOf = (urls: string): ReturnType<typeof loadConfig>['backends'] => loadConfig({ backends: urls }).backends;

describe('the peer proof and the listener settings', () => {
  const fleet = 'mysql://ticketd:pw-a@db-a:3306/ticketd,mysql://ticketd:pw-b@db-b:3306/ticketd';

  it('front ends given the same backends agree, in any order; another password or secret does not', () => {
    const proof = peerProof(undefined, backendsOf(fleet));
    expect(proof).toMatch(/^[0-9a-f]{64}$/);
    expect(peerProof(undefined, backendsOf(fleet.split(',').reverse().join(',')))).toBe(proof);
    expect(peerProof(undefined, backendsOf(fleet.replace('pw-b', 'pw-c')))).not.toBe(proof);
    const secret = 'a-fleet-secret-0123456789';
    expect(peerProof(secret, backendsOf(fleet))).toBe(peerProof(secret, backendsOf('mysql://other@db-c/x')));
    expect(peerProof(secret, backendsOf(fleet))).not.toBe(proof);
    // The proof is a digest: the secret itself never travels.
    expect(peerProof(secret, backendsOf(fleet))).not.toContain(secret);
  });

  it('TICKETD_HOST and TICKETD_PEER_SECRET are checked at start, one line each', () => {
    expect(loadConfig({ backends: fleet, host: '127.0.0.1', peerSecret: 'x'.repeat(16) })).toMatchObject({
      host: '127.0.0.1',
      peerSecret: 'x'.repeat(16),
    });
    expect(loadConfig({ backends: fleet }).host).toBeUndefined();
    expect(() => loadConfig({ backends: fleet, host: 'not an address!' })).toThrow(
      /TICKETD_HOST must be an address or host name/,
    );
    expect(() => loadConfig({ backends: fleet, peerSecret: 'short' })).toThrow(
      /TICKETD_PEER_SECRET must be at least 16 characters/,
    );
  });
});
