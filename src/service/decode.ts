/** Where an ID came from: its ordered ID, ticket and the backend whose residue class holds the ticket. */
import type { Allocator } from '../allocator/allocator.js';
import { ticketOfId } from '../core/blocks.js';
import type { SequenceSettings } from '../core/sequence.js';
import { ownsTicket } from '../core/stripes.js';
import { IdNotIssuedError } from '../core/errors.js';
import type { IdCodec } from './id-codec.js';

/** Where an ID of a sequence came from (the admin decode route). */
export interface DecodedId {
  readonly sequence: string;
  readonly id: bigint;
  readonly ids: SequenceSettings['ids'];
  readonly ordered: bigint;
  readonly ticket: bigint;
  /** The backend whose residue class holds the ticket; undefined when no known backend's does. */
  readonly backend: string | undefined;
}

/**
 * Decodes an ID of the sequence. An ID outside the domain, or whose ticket is above its backend's
 * last ticket, was never handed out: IdNotIssuedError says so instead of answering a plausible ticket.
 */
export async function decodeId(
  allocator: Allocator,
  settings: SequenceSettings,
  codec: IdCodec,
  id: bigint,
): Promise<DecodedId> {
  const name = settings.name;
  if (id <= settings.startAfter || id > settings.maxId) {
    throw new IdNotIssuedError(
      `ID ${id} was never issued: it is outside sequence ${name}'s domain (${settings.startAfter}, ${settings.maxId}]`,
    );
  }
  const ordered = codec.decode(id);
  const ticket = ticketOfId(ordered, settings);
  const owner = allocator
    .status()
    .find(
      (b) =>
        b.stripe !== undefined &&
        ownsTicket(ticket, { increment: BigInt(b.stripe.increment), offset: BigInt(b.stripe.offset) }),
    );
  const last = owner && (await allocator.fleet.lastTicketOn(owner.backend, name));
  if (last !== undefined && ticket > last)
    throw new IdNotIssuedError(
      `ID ${id} of sequence ${name} was never issued: its ticket ${ticket} is above ${owner?.backend}'s last ticket ${last}`,
    );
  return { sequence: name, id, ids: settings.ids, ordered, ticket, backend: owner?.backend };
}
