/**
 * `ticketd migrate verify`: every legacy ID above startAfter must come from a block ticketd has
 * already handed out. Any other ID there could be handed out by ticketd later: a collision. For an
 * opaque sequence, "its block" is the block of the ordered ID it decodes to.
 */
import { decoderFor } from '../service/id-codec.js';
import type { Allocator } from '../allocator/allocator.js';
import type { SequenceSettings } from '../core/sequence.js';
import { ticketOfId } from '../core/blocks.js';
import { ownsTicket, type Stripe } from '../core/stripes.js';
import { readIdsAbove, type LegacyConnection, type LegacyTable } from '../backend/mysql/legacy-table.js';

/** IDs read per page while scanning the legacy table. */
export const VERIFY_PAGE_ROWS = 10_000;
/** How many unexplained IDs are listed; the rest are counted. */
export const VERIFY_LISTED_IDS = 5;

/** What verify found. */
export interface VerifyReport {
  /** Legacy IDs above startAfter (and at most maxId), all checked. */
  readonly checked: number;
  /** IDs above startAfter that lie in no block ticketd has handed out: the first few. */
  readonly unexplained: readonly bigint[];
  readonly unexplainedCount: number;
}

/** Scans the legacy IDs above startAfter and checks each against the backends' counters. */
export async function verifyMigration(legacy: LegacyConnection, table: LegacyTable, settings: SequenceSettings, allocator: Allocator): Promise<VerifyReport> {
  const stripes: Stripe[] = await allocator.fleet.stripes();
  // An opaque sequence's IDs are P(ordered ID): the ticket is that of the ordered one.
  const decode = decoderFor(settings);
  const unexplained: bigint[] = [];
  let unexplainedCount = 0;
  let checked = 0;
  for (let after = settings.startAfter; ; ) {
    const page = await readIdsAbove(legacy, table, after, VERIFY_PAGE_ROWS);
    // Counters are read after the page: every ID in it came from a ticket issued before now.
    const lastTickets = await allocator.fleet.lastTickets(settings.name);
    for (const id of page) {
      if (id > settings.maxId) continue;
      checked++;
      const ticket = ticketOfId(decode(id), settings);
      const owner = stripes.findIndex((s) => ownsTicket(ticket, s));
      if (owner >= 0 && ticket <= lastTickets[owner]!) continue;
      unexplainedCount++;
      if (unexplained.length < VERIFY_LISTED_IDS) unexplained.push(id);
    }
    if (page.length < VERIFY_PAGE_ROWS) break;
    after = page[page.length - 1]!;
  }
  return { checked, unexplained, unexplainedCount };
}
