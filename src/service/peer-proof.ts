/**
 * What a front end shows another to be served on its peer listener (strict sequences' forwarded
 * calls): a digest of a secret every front end of the fleet holds. The secret is TICKETD_PEER_SECRET
 * when set; otherwise it is derived from what the fleet's front ends already share: the backends
 * they use, with the account and password they log in with (docs/strict-sequences.md, "Peers").
 */
import { createHash } from 'node:crypto';
import type { BackendAddress } from '../backend/backend-address.js';

/** The header a forwarded call carries its proof in. */
export const PEER_PROOF_HEADER = 'x-ticketd-peer';
/** The header of a peer listener's refusal of a proof (a 403 a follower must not pass on to its client as its client's own). */
export const PEER_REFUSED_HEADER = 'x-ticketd-peer-refused';

/** The proof this process sends and expects: hex SHA-256 of a labelled secret (the secret itself never travels). */
export function peerProof(peerSecret: string | undefined, backends: readonly BackendAddress[]): string {
  const secret = peerSecret ?? derivedSecret(backends);
  return createHash('sha256').update(`ticketd peer proof v1\n${secret}`).digest('hex');
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
