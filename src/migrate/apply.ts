/**
 * `ticketd migrate apply`: creates the planned sequence on every backend, with each counter at or
 * above startAfter, and commits it only if the legacy table has not grown past startAfter.
 */
import { throwFirstFailure, type Allocator } from '../allocator/allocator.js';
import { rowsOf } from '../service/sequence-rows.js';
import { sameSettings, type SequenceSettings } from '../core/sequence.js';
import { firstUsefulTicket } from '../core/blocks.js';
import { MigrationRefusedError, SequenceConflictError } from '../errors.js';
import type { TicketService } from '../service/ticket-service.js';
import { legacyHighOf, type MigrationPlan } from './plan.js';
import { readLegacyHigh, type LegacyConnection } from '../backend/mysql/legacy-table.js';

/** What apply did. */
export type ApplyOutcome =
  | { readonly kind: 'created'; readonly settings: SequenceSettings; readonly legacyHigh: bigint }
  | { readonly kind: 'unchanged'; readonly settings: SequenceSettings };

/** Runs the plan against every backend; every backend must be up. */
export async function applyMigration(
  plan: MigrationPlan,
  legacy: LegacyConnection,
  allocator: Allocator,
  service: TicketService,
  startAfterGiven: boolean,
): Promise<ApplyOutcome> {
  const wanted = plan.settings;
  const answers = await allocator.readSequence(wanted.name);
  throwFirstFailure(answers);
  const existing = rowsOf(answers)[0];
  if (existing !== undefined) {
    // A second apply without --start-after recomputes a higher one from a table that has grown
    // since (with ticketd's own IDs, too), so it adopts the stored one when the rest agrees.
    const target = startAfterGiven ? wanted : { ...wanted, startAfter: existing.startAfter };
    if (!sameSettings(existing, target)) {
      throw new SequenceConflictError(
        `sequence ${wanted.name} exists with blockSize=${existing.blockSize} startAfter=${existing.startAfter} maxId=${existing.maxId}; ` +
          `the plan wants blockSize=${target.blockSize} startAfter=${target.startAfter} maxId=${target.maxId}`,
      );
    }
    // A backend that missed the first apply gets the sequence now; the others are left alone.
    await service.createSequence(existing);
    return { kind: 'unchanged', settings: existing };
  }
  await allocator.prepareSequence(wanted.name, firstUsefulTicket(wanted));
  // The last look before the sequence exists: an app still inserting through AUTO_INCREMENT must
  // not have reached IDs that ticketd is about to hand out.
  const now = legacyHighOf(await readLegacyHigh(legacy, plan.table));
  if (now > wanted.startAfter) {
    throw new MigrationRefusedError(
      `${plan.table.name}.${plan.table.column} has reached ${now}, past startAfter ${wanted.startAfter}: the legacy app outgrew the headroom; plan again with a larger --headroom`,
    );
  }
  await service.createSequence(wanted);
  return { kind: 'created', settings: wanted, legacyHigh: now };
}
