/**
 * One key per opaque sequence, whoever creates it and however often (invariant 7 of design.md):
 * the key a backend already holds, or a new one written first to the backend of lowest identity.
 */
import { randomBytes } from 'node:crypto';
import { KEY_BYTES, PERMUTATION_SCHEME } from 'ticketd-client';
import type { TicketBackend } from '../backend/ticket-backend.js';
import { firstUsefulTicket } from '../core/blocks.js';
import { describeSettings, sameSettings, withKey, type SequenceSettings } from '../core/sequence.js';
import { newerNeeded, THIS_VERSION } from '../core/versions.js';
import { BackendsUnavailableError, SequenceConflictError, UpgradeRequiredError } from '../core/errors.js';
import { errorText } from '../util/error-text.js';

/** One backend's answer, as the allocator's breakers saw it. */
export type Answer<T> = { readonly backend: string } & (
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown }
);

/** Runs an operation on every backend, open ones included, through the breakers. */
export type OnEveryBackend = <T>(operation: (backend: TicketBackend) => Promise<T>) => Promise<Answer<T>[]>;

/**
 * The opaque sequence's key. Every backend must answer first (one that did not might hold a key
 * from an earlier try), and a new key is written to the backend of lowest identity before any
 * other: of two processes creating the sequence at once, the one that loses there takes the
 * winner's key, so no two backends get different keys. `created` is true when this call wrote it.
 */
export async function agreeOnKey(
  onEvery: OnEveryBackend,
  requested: SequenceSettings,
): Promise<{ settings: SequenceSettings; created: boolean }> {
  const name = requested.name;
  const answers = await onEvery(async (b) => ({
    backend: b,
    row: await b.readSequence(name),
    identity: (await b.settings()).identity ?? b.label,
  }));
  const silent = answers.flatMap((a) => (a.ok ? [] : [`${a.backend}: ${errorText(a.error)}`]));
  if (silent.length > 0) {
    throw new BackendsUnavailableError(
      `opaque sequence ${name} was not created: ${silent.join('; ')}; its key is made only once every backend has answered; repeat the request`,
    );
  }
  const rows = answers.flatMap((a) => (a.ok ? [a.value] : []));
  // A later ticketd's sequence carries a key this one does not read: making another would split it.
  const newer = rows.find((r) => r.row !== undefined && newerNeeded(r.row) !== undefined);
  if (newer !== undefined)
    throw new UpgradeRequiredError(
      `sequence ${name} on ${newer.backend.label} needs ticketd ${newerNeeded(newer.row!)} or later; this process is ${THIS_VERSION} and leaves it as it is`,
    );
  const held = rows.find((r) => r.row?.key !== undefined)?.row;
  if (held?.key !== undefined) {
    // The scheme comes with the key: a sequence made by an older ticketd keeps its scheme.
    if (held.scheme === undefined) throw new Error(`the key of sequence ${name} was read without its scheme`);
    return { settings: withKey(requested, held.key, held.scheme), created: false };
  }
  const first = rows.sort((a, b) => (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0))[0]!;
  let created = false;
  try {
    created = await first.backend.createSequence(
      withKey(requested, randomBytes(KEY_BYTES), PERMUTATION_SCHEME),
      firstUsefulTicket(requested),
    );
  } catch (error) {
    if (!(error instanceof SequenceConflictError)) throw error;
  }
  const stored = await first.backend.readSequence(name);
  if (stored?.key === undefined || stored.scheme === undefined || !sameSettings(stored, requested)) {
    throw new SequenceConflictError(
      `sequence ${name} exists on ${first.backend.label} with ${stored === undefined ? 'no row' : describeSettings(stored)}`,
    );
  }
  return { settings: withKey(requested, stored.key, stored.scheme), created };
}
