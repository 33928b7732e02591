/**
 * `ticketd migrate verify`: every ID of the legacy table above startAfter, one by one, against the
 * cut of the column (cut-over.ts) and the blocks ticketd has handed out:
 * - in ticketd's range (startAfter, maxId], an ID outside every block handed out was not made by
 *   ticketd, which may hand it out later: a collision waiting to happen;
 * - above maxId lies the old version's reserve, which ticketd never reaches;
 * - an ID held by more than one row (a column without a unique key) is a collision that happened;
 * - AUTO_INCREMENT at or below maxId sends the next insert without an ID into ticketd's range.
 * For an opaque sequence, "its block" is the block of the ordered ID it decodes to.
 */
import { decoderFor } from '../service/id-codec.js';
import type { Allocator } from '../allocator/allocator.js';
import type { SequenceSettings } from '../core/sequence.js';
import { ticketOfId } from '../core/blocks.js';
import { ownsTicket, type Stripe } from '../core/stripes.js';
import { readIdCountsAbove, type LegacyConnection, type LegacyTable } from '../backend/mysql/legacy-table.js';
import { counterProblem, regionOf } from './cut-over.js';

/** IDs read per page while scanning the legacy table. */
export const VERIFY_PAGE_ROWS = 10_000;
/** How many IDs of each kind of problem are listed; the rest are counted. */
export const VERIFY_LISTED_IDS = 5;

/** A count and the first few IDs of one kind. */
export interface Tally {
  count: number;
  readonly first: bigint[];
}

/** What verify found, ID by ID. */
export interface VerifyReport {
  /** IDs in (startAfter, maxId] inside blocks ticketd has handed out: the new version's. */
  readonly ticketd: Tally;
  /** IDs in (startAfter, maxId] outside every block handed out: not ticketd's, and it may issue them later. */
  readonly unexplained: Tally;
  /** IDs above maxId: the old version's AUTO_INCREMENT (or anything else), out of ticketd's reach. */
  readonly reserve: Tally;
  /** IDs held by more than one row: a collision that already happened. */
  readonly duplicated: Tally;
  /** What is wrong with AUTO_INCREMENT, if anything. */
  readonly counterProblem: string | undefined;
}

/** True when verify found nothing that collides or could. */
export function isClean(report: VerifyReport): boolean {
  return report.unexplained.count === 0 && report.duplicated.count === 0 && report.counterProblem === undefined;
}

/** Scans the legacy IDs above startAfter (keyset pages) and checks each one. */
export async function verifyMigration(
  legacy: LegacyConnection,
  table: LegacyTable,
  settings: SequenceSettings,
  allocator: Allocator,
): Promise<VerifyReport> {
  const stripes: Stripe[] = await allocator.fleet.stripes();
  // An opaque sequence's IDs are P(ordered ID): the ticket is that of the ordered one.
  const decode = decoderFor(settings);
  const report: VerifyReport = {
    ticketd: tally(),
    unexplained: tally(),
    reserve: tally(),
    duplicated: tally(),
    // Read before the scan: a counter that is fine now was fine for every row already there.
    counterProblem: counterProblem(table.autoIncrement, settings),
  };
  for (let after = settings.startAfter; ;) {
    const page = await readIdCountsAbove(legacy, table, after, VERIFY_PAGE_ROWS);
    // Counters are read after the page: every ID in it came from a ticket issued before now.
    const lastTickets = await allocator.fleet.lastTickets(settings.name);
    for (const { id, rows } of page) {
      if (rows > 1) add(report.duplicated, id);
      if (regionOf(id, settings) === 'reserve') {
        add(report.reserve, id);
        continue;
      }
      const ticket = ticketOfId(decode(id), settings);
      const owner = stripes.findIndex((s) => ownsTicket(ticket, s));
      add(owner >= 0 && ticket <= lastTickets[owner]! ? report.ticketd : report.unexplained, id);
    }
    if (page.length < VERIFY_PAGE_ROWS) break;
    after = page[page.length - 1]!.id;
  }
  return report;
}

/** The report as the lines `migrate verify` prints. */
export function formatVerify(report: VerifyReport, settings: SequenceSettings, table: LegacyTable): string[] {
  const lines: string[] = [];
  const range = `(${settings.startAfter}, ${settings.maxId}]`;
  const inRange = report.ticketd.count + report.unexplained.count;
  if (report.unexplained.count === 0) {
    lines.push(`ok: ${inRange} IDs above startAfter ${settings.startAfter}, all in blocks ticketd has handed out`);
  } else {
    lines.push(
      `problem: ${report.unexplained.count} of ${inRange} IDs above startAfter ${settings.startAfter} were not made by ticketd, which may hand them out later: ${listed(report.unexplained)} ` +
        `(written without ticketd: an insert with an ID of its own, or without an ID while AUTO_INCREMENT lay in ${range})`,
    );
  }
  if (report.reserve.count > 0 || settings.maxId < table.maxId) {
    lines.push(
      `old version: ${report.reserve.count} IDs above maxId ${settings.maxId}, in the reserve up to ${table.maxId} that ticketd never reaches (inserted through AUTO_INCREMENT)`,
    );
  }
  if (report.duplicated.count > 0) {
    lines.push(
      `problem: ${report.duplicated.count} IDs are held by more than one row (a collision that happened; the column has no unique key): ${listed(report.duplicated)}`,
    );
  }
  if (report.counterProblem !== undefined)
    lines.push(
      `problem: ${report.counterProblem}; move it above maxId: ALTER TABLE ${table.name} AUTO_INCREMENT = ${settings.maxId + 1n}`,
    );
  return lines;
}

function tally(): Tally {
  return { count: 0, first: [] };
}

function add(t: Tally, id: bigint): void {
  t.count++;
  if (t.first.length < VERIFY_LISTED_IDS) t.first.push(id);
}

function listed(t: Tally): string {
  const more = t.count - t.first.length;
  return `${t.first.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}
