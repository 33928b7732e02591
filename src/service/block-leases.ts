/**
 * Leases of blocks a client may give back (POST …/blocks answers `lease`; POST …/blocks/return takes
 * it). A lease is `v1.<first>.<last>.<generation>.<mac>`, the mac an HMAC-SHA256 over the sequence
 * and the range with a backend's lease secret: only a block ticketd leased can be given back, so a
 * client cannot give back IDs it never held (and that another holder may be serving).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IdRange } from '../core/blocks.js';
import { LeaseInvalidError } from '../core/errors.js';

const PREFIX = 'v1';
/** Longest lease accepted: three 20-digit numbers, a 10-digit generation, a 43-character mac and dots. */
export const MAX_LEASE_LENGTH = 160;

function mac(secret: Uint8Array, sequence: string, range: IdRange): Buffer {
  return createHmac('sha256', secret)
    .update(`ticketd-lease ${PREFIX}\n${sequence}\n${range.first}\n${range.last}\n${range.generation ?? 0}`)
    .digest();
}

/** The lease of a block of the sequence, signed with `secret`. */
export function signLease(secret: Uint8Array, sequence: string, range: IdRange): string {
  const generation = range.generation ?? 0;
  return `${PREFIX}.${range.first}.${range.last}.${generation}.${mac(secret, sequence, range).toString('base64url')}`;
}

/** The range a lease stands for, if it is well formed (not yet checked against a secret). */
export function parseLease(lease: string): { readonly range: IdRange; readonly mac: Buffer } | undefined {
  if (lease.length > MAX_LEASE_LENGTH) return undefined;
  const match = /^v1\.([0-9]{1,20})\.([0-9]{1,20})\.([0-9]{1,10})\.([A-Za-z0-9_-]{43})$/.exec(lease);
  if (match === null) return undefined;
  const range = { first: BigInt(match[1]!), last: BigInt(match[2]!), generation: Number(match[3]) };
  if (range.first > range.last) return undefined;
  return { range, mac: Buffer.from(match[4]!, 'base64url') };
}

/**
 * The block a lease of the sequence stands for, when one of `secrets` signed it; throws
 * LeaseInvalidError otherwise (malformed, another sequence's, forged or signed by a secret not known).
 */
export function verifyLease(secrets: readonly Uint8Array[], sequence: string, lease: string): IdRange {
  const parsed = parseLease(lease);
  if (parsed !== undefined) {
    for (const secret of secrets) {
      const expected = mac(secret, sequence, parsed.range);
      if (expected.length === parsed.mac.length && timingSafeEqual(expected, parsed.mac)) return parsed.range;
    }
  }
  throw new LeaseInvalidError(`that lease is not one of sequence ${sequence}'s blocks`);
}
