/**
 * What a front end shows another to be served on its peer listener (strict sequences' forwarded
 * calls): a digest of a secret every front end of the fleet holds. The secret is TICKETD_PEER_SECRET
 * when set; otherwise it is derived from what the fleet's front ends already share: the backends
 * they use, with the account and password they log in with (docs/strict-sequences.md, "Peers").
 */
import { scryptSync } from 'node:crypto';
import type { BackendAddress } from '../backend/backend-address.js';

/** The header a forwarded call carries its proof in. */
export const PEER_PROOF_HEADER = 'x-ticketd-peer';
/** The header a forwarded call names its caller in (the token's name, for the leader's audit log; it grants nothing). */
export const ON_BEHALF_OF_HEADER = 'x-ticketd-on-behalf-of';
/** The header of a peer listener's refusal of a proof (a 403 a follower must not pass on to its client as its client's own). */
export const PEER_REFUSED_HEADER = 'x-ticketd-peer-refused';

/** scrypt's cost: 16 MiB and some 50 ms, once per process at start. */
const SCRYPT_COST = { N: 2 ** 14, r: 8, p: 1 } as const;

/**
 * The proof this process sends and expects: hex scrypt of the secret (the secret itself never
 * travels). A slow hash, not SHA-256: over plain HTTP a proof can be read, and a derived secret holds
 * the backends' passwords, which a fast hash would give up to an offline guess at a weak one.
 */
export function peerProof(peerSecret: string | undefined, backends: readonly BackendAddress[]): string {
  const secret = peerSecret ?? derivedSecret(backends);
  return scryptSync(secret, 'ticketd peer proof v1', 32, SCRYPT_COST).toString('hex');
}

/**
 * The backends as the fleet spells them (label = host:port/database), each with its account and
 * password, in a fixed order: front ends configured alike derive the same secret.
 */
function derivedSecret(backends: readonly BackendAddress[]): string {
  return backends
    .map((b) => JSON.stringify([b.label, b.user, b.password]))
    .sort()
    .join('\n');
}
