/**
 * `ticketd migrate apply`: cuts the legacy column in three (cut-over.ts): moves AUTO_INCREMENT above
 * the sequence's maxId, into the old version's reserve, and only then creates the sequence on
 * every backend, with each counter at or above startAfter, if the table has not grown past
 * startAfter below maxId.
 */
import { throwFirstFailure, type Allocator } from '../allocator/allocator.js';
import { rowsOf } from '../service/sequence-rows.js';
import { sameSettings, type SequenceSettings } from '../core/sequence.js';
import { firstUsefulTicket } from '../core/blocks.js';
import { MigrationRefusedError, SequenceConflictError } from '../core/errors.js';
import type { TicketService } from '../service/ticket-service.js';
import type { MigrationPlan } from './plan.js';
import {
  alterLegacy,
  quoteIdentifier,
  readHighestUpTo,
  readLegacyHigh,
  type LegacyConnection,
  type LegacyTable,
} from '../backend/mysql/legacy-table.js';

/** What apply did. */
export type ApplyOutcome =
  | {
      readonly kind: 'created';
      readonly settings: SequenceSettings;
      readonly legacyHigh: bigint;
      readonly counter: bigint | undefined;
      readonly ran: readonly string[];
    }
  | {
      readonly kind: 'unchanged';
      readonly settings: SequenceSettings;
      readonly counter: bigint | undefined;
      readonly ran: readonly string[];
    };

/** Which settings the command line gave (the others may be adopted from a sequence that exists). */
export interface ApplyChoices {
  readonly startAfterGiven: boolean;
  readonly reserveGiven: boolean;
  /** `--alter`: AUTO_INCREMENT may be dropped (with no reserve, before the sequence exists). */
  readonly alter: boolean;
}

/** Runs the plan against every backend; every backend must be up. */
export async function applyMigration(
  plan: MigrationPlan,
  legacy: LegacyConnection,
  allocator: Allocator,
  service: TicketService,
  choices: ApplyChoices,
): Promise<ApplyOutcome> {
  const wanted = plan.settings;
  const answers = await allocator.readSequence(wanted.name);
  throwFirstFailure(answers);
  const existing = rowsOf(answers)[0];
  if (existing !== undefined) {
    // A second apply without --start-after (or --legacy-reserve) recomputes them from a table that
    // has grown since (with ticketd's own IDs, too), so it adopts the stored ones when the rest agrees.
    const target = {
      ...wanted,
      ...(!choices.startAfterGiven && { startAfter: existing.startAfter }),
      ...(!choices.reserveGiven && { maxId: existing.maxId }),
    };
    if (!sameSettings(existing, target)) {
      throw new SequenceConflictError(
        `sequence ${wanted.name} exists with blockSize=${existing.blockSize} startAfter=${existing.startAfter} maxId=${existing.maxId}; ` +
          `the plan wants blockSize=${target.blockSize} startAfter=${target.startAfter} maxId=${target.maxId}`,
      );
    }
    // The counter must still be above maxId (a restore of the legacy database may have lowered it).
    const ran = await moveCounterAbove(legacy, plan, existing, choices.alter);
    // A backend that missed the first apply gets the sequence now; the others are left alone.
    await service.createSequence(existing);
    const counter = await keepReserve(legacy, stillAutoIncrement(plan, ran), existing, allocator);
    return { kind: 'unchanged', settings: existing, counter, ran };
  }
  await allocator.prepareSequence(wanted.name, firstUsefulTicket(wanted));
  // Rows the old version inserted since the plan: none may lie above startAfter in ticketd's range.
  await refuseIfGrown(legacy, plan.table, wanted, '');
  const ran = await moveCounterAbove(legacy, plan, wanted, choices.alter);
  // Inserts that took the counter between the look above and the move: the last look, before the
  // sequence exists. From here on no insert without an ID lands at or below maxId.
  const legacyHigh = await refuseIfGrown(
    legacy,
    plan.table,
    wanted,
    ` (AUTO_INCREMENT already moved above maxId ${wanted.maxId}, which is harmless: apply again with --start-after above that)`,
  );
  await service.createSequence(wanted);
  const counter = await keepReserve(legacy, stillAutoIncrement(plan, ran), wanted, allocator);
  return { kind: 'created', settings: wanted, legacyHigh, counter, ran };
}

/** The legacy table as it is after apply's own statements (one of which may have dropped AUTO_INCREMENT). */
function stillAutoIncrement(plan: MigrationPlan, ran: readonly string[]): LegacyTable {
  return { ...plan.table, hasAutoIncrement: plan.table.hasAutoIncrement && !ran.includes(plan.alterStatement) };
}

/**
 * While the legacy table keeps AUTO_INCREMENT, the IDs above maxId are the old version's: the
 * sequence's ceiling is recorded on every backend, so no `sequences set --max-id` can widen it into
 * them. Without AUTO_INCREMENT (apply --alter) nothing inserts there, and the ceiling is lifted.
 * Returns the legacy counter.
 */
export async function keepReserve(
  legacy: LegacyConnection,
  table: Pick<LegacyTable, 'name' | 'column' | 'hasAutoIncrement'>,
  settings: SequenceSettings,
  allocator: Allocator,
): Promise<bigint | undefined> {
  const counter = (await readLegacyHigh(legacy, table)).autoIncrement;
  if (counter === undefined) {
    await allocator.fleet.liftCeiling(settings.name);
  } else {
    await allocator.fleet.recordCeiling(
      settings.name,
      settings.maxId,
      `migrated from ${table.name}.${table.column}, whose AUTO_INCREMENT keeps the IDs above it for the old version (docs/migrating.md); migrate apply --alter lifts this once no old version runs`,
    );
  }
  return counter;
}

/** The highest ID an insert without an ID has taken or will take inside (…, maxId]; refuses past startAfter. */
async function refuseIfGrown(
  legacy: LegacyConnection,
  table: LegacyTable,
  wanted: SequenceSettings,
  note: string,
): Promise<bigint> {
  const rows = await readHighestUpTo(legacy, table, wanted.maxId);
  const { autoIncrement } = await readLegacyHigh(legacy, table);
  // A counter already in the reserve (a second try) hands out nothing at or below maxId.
  const counter = autoIncrement !== undefined && autoIncrement <= wanted.maxId ? autoIncrement : 0n;
  const now = rows > counter ? rows : counter;
  if (now > wanted.startAfter) {
    throw new MigrationRefusedError(
      `${table.name}.${table.column} has reached ${now}, past startAfter ${wanted.startAfter}: the legacy app outgrew the headroom; plan again with a larger --headroom${note}`,
    );
  }
  return now;
}

/**
 * Puts AUTO_INCREMENT above maxId, where the old version keeps inserting (cut-over.ts, step 1). With
 * no reserve there is nowhere to put it: only `--alter` may go on, dropping AUTO_INCREMENT before
 * the sequence exists (no old version may be running then).
 */
async function moveCounterAbove(
  legacy: LegacyConnection,
  plan: MigrationPlan,
  settings: SequenceSettings,
  alter: boolean,
): Promise<string[]> {
  const { table } = plan;
  const { autoIncrement } = await readLegacyHigh(legacy, table);
  if (!table.hasAutoIncrement || autoIncrement === undefined || autoIncrement > settings.maxId) return [];
  if (settings.maxId >= table.maxId) {
    if (!alter) {
      throw new MigrationRefusedError(
        `${table.name}.${table.column} has AUTO_INCREMENT and sequence ${settings.name} reaches the column's largest value ${table.maxId}: no reserve is left for inserts without an ID. ` +
          'Keep a reserve (--legacy-reserve, the default), or, with no old version running, add --alter to drop AUTO_INCREMENT first',
      );
    }
    await alterLegacy(legacy, plan.alterStatement);
    return [plan.alterStatement];
  }
  const statement = `ALTER TABLE ${quoteIdentifier(table.name)} AUTO_INCREMENT = ${settings.maxId + 1n}`;
  await alterLegacy(legacy, statement);
  const after = (await readLegacyHigh(legacy, table)).autoIncrement;
  if (after !== undefined && after <= settings.maxId) {
    throw new MigrationRefusedError(
      `${statement} left AUTO_INCREMENT at ${after}: the server did not move it; nothing was created`,
    );
  }
  return [statement];
}
