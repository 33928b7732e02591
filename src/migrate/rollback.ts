/**
 * Taking a migration back to the legacy table's own AUTO_INCREMENT. The application may switch only
 * once no new ticket can be taken (the sequence is retired), and AUTO_INCREMENT must start above
 * every ID any block of the sequence could hold: blocks still cached in ticketd processes and leased
 * to SDK clients keep being handed out while the old release drains, and they all come from tickets
 * already taken. The highest ticket taken anywhere (every backend's counter, claims and floors)
 * bounds them all.
 */
import { blockForTicket } from '../core/blocks.js';
import type { SequenceSettings } from '../core/sequence.js';
import { quoteIdentifier, type LegacyTable } from '../backend/mysql/legacy-table.js';
import { rollbackCounter } from './cut-over.js';

/** What a rollback would do, or why it must not. */
export interface RollbackPlan {
  readonly sequence: string;
  readonly table: string;
  /** The highest ticket taken on any backend (0 when none was). */
  readonly highestTicket: bigint;
  /** The highest ID any block of the sequence could hold: nothing above it was ever handed out. */
  readonly highestId: bigint;
  /** Where AUTO_INCREMENT goes: the first ID the application will take itself. */
  readonly nextAutoIncrement: bigint;
  readonly statement: string;
  /** AUTO_INCREMENT is already above every issued ID: a rollback done before (the rows above are the application's own). */
  readonly done: boolean;
  /** Why it must not be done; undefined when it may. */
  readonly refusal: string | undefined;
}

/** The highest ID a block of the sequence could hold, given the highest ticket taken anywhere. */
export function highestIdEverIssued(settings: SequenceSettings, highestTicket: bigint): bigint {
  // An opaque ID is a permutation of the whole domain: any of (startAfter, maxId] may be out there.
  if (settings.ids === 'opaque') return settings.maxId;
  if (highestTicket === 0n) return settings.startAfter;
  const outcome = blockForTicket(highestTicket, settings);
  // A ticket past maxId: those before it may have reached maxId itself.
  if (outcome.kind === 'exhausted') return settings.maxId;
  if (outcome.kind === 'below-start') return settings.startAfter;
  return outcome.range.last;
}

/**
 * Plans the rollback of `settings` onto `table`: pure. `rowsAbove` are legacy rows found above the
 * highest ID ticketd could have issued and at most its maxId (none should be: every row there since
 * the migration has an ID of ticketd's; rows above maxId are the old version's reserve).
 */
export function planRollback(
  settings: SequenceSettings,
  highestTicket: bigint,
  table: LegacyTable,
  rowsAbove: readonly bigint[],
): RollbackPlan {
  const highestId = highestIdEverIssued(settings, highestTicket);
  // With a reserve, the counter stays above maxId, where the old version has inserted all along.
  const next = rollbackCounter(settings, table.maxId, highestId);
  const name = quoteIdentifier(table.name);
  const statement = table.hasAutoIncrement
    ? `ALTER TABLE ${name} AUTO_INCREMENT = ${next}`
    : `ALTER TABLE ${name} MODIFY ${quoteIdentifier(table.column)} ${table.columnType} NOT NULL AUTO_INCREMENT, AUTO_INCREMENT = ${next}`;
  const done =
    settings.retired === true &&
    table.hasAutoIncrement &&
    table.autoIncrement !== undefined &&
    table.autoIncrement >= next;
  const refusal = done ? undefined : refusalOf(settings, table, next, highestId, rowsAbove);
  return {
    sequence: settings.name,
    table: table.name,
    highestTicket,
    highestId,
    nextAutoIncrement: next,
    statement,
    done,
    refusal,
  };
}

function refusalOf(
  settings: SequenceSettings,
  table: LegacyTable,
  next: bigint,
  highestId: bigint,
  rowsAbove: readonly bigint[],
): string | undefined {
  const { name } = settings;
  if (settings.retired !== true) {
    return `sequence ${name} is not retired: new tickets could be taken while the application switches; run npx ticketd sequences retire ${name} first`;
  }
  if (next > table.maxId) {
    return settings.ids === 'opaque'
      ? `sequence ${name} is opaque: any ID of its domain up to maxId ${settings.maxId} may have been issued, so AUTO_INCREMENT must start at ${next}, past what ${table.name}.${table.column} (${table.columnType}) holds (${table.maxId}); widen the column first`
      : `AUTO_INCREMENT must start at ${next}, past what ${table.name}.${table.column} (${table.columnType}) holds (${table.maxId}); widen the column first`;
  }
  if (rowsAbove.length > 0) {
    return `${table.name} has rows above ${highestId}, the highest ID ticketd could have issued (${rowsAbove.join(', ')}${rowsAbove.length >= ROWS_SHOWN ? ', …' : ''}): something else wrote IDs there, and AUTO_INCREMENT from ${next} would meet them; find out what before rolling back`;
  }
  return undefined;
}

/** Legacy rows above the highest issued ID that a refusal names. */
export const ROWS_SHOWN = 5;

/** The plan in lines, for the command's output. */
export function formatRollback(plan: RollbackPlan, applied: boolean): string[] {
  const lines = [
    `sequence ${plan.sequence}: highest ticket taken on any backend ${plan.highestTicket}; no ID above ${plan.highestId} was ever handed out, in any block, cached or leased`,
    `${plan.table}: AUTO_INCREMENT from ${plan.nextAutoIncrement}`,
  ];
  if (plan.refusal !== undefined) return [...lines, `refused: ${plan.refusal}`];
  if (plan.done)
    return [
      ...lines,
      `done already: ${plan.table}'s AUTO_INCREMENT is above every ID ticketd could have issued; nothing to run`,
    ];
  if (applied)
    return [
      ...lines,
      `ran: ${plan.statement}`,
      'done: the application may insert without an ID; old ticketd clients may drain what they hold, and no ID repeats',
    ];
  return [...lines, `would run: ${plan.statement}`, 'run again with --apply to do it'];
}
