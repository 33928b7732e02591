/**
 * A sequence's settings from the rows the backends hold, or the reason it must not be served: no
 * backend answered, none has it, it is retired, the rows conflict, or it needs a later ticketd.
 */
import type { Answer } from '../allocator/allocator.js';
import { conflictOf, describeSettings, sameButMaxId, type SequenceSettings } from '../core/sequence.js';
import { newerNeeded, THIS_VERSION } from '../core/versions.js';
import {
  BackendsUnavailableError,
  SequenceConflictError,
  SequenceNotFoundError,
  SequenceRetiredError,
  UpgradeRequiredError,
  type TicketdError,
} from '../core/errors.js';
import { errorText } from '../util/error-text.js';

/** The settings to serve, or the error to answer and whether it may be remembered (every backend said so). */
export type Resolution =
  { readonly settings: SequenceSettings } | { readonly error: TicketdError; readonly remember: boolean };

/** The rows of a sequence that the backends which answered hold (those without it hold none). */
export function rowsOf(answers: readonly Answer<SequenceSettings | undefined>[]): SequenceSettings[] {
  return answers.flatMap((a) => (a.ok && a.value !== undefined ? [a.value] : []));
}

/** The error a retired sequence is answered with. */
export function retiredError(name: string): SequenceRetiredError {
  return new SequenceRetiredError(
    `sequence ${name} was retired: nothing of it is issued again, and its name is not created again`,
  );
}

/** Judges the backends' answers for one sequence. */
export function resolveSequence(name: string, answers: readonly Answer<SequenceSettings | undefined>[]): Resolution {
  const found = answers.flatMap((a) =>
    a.ok && a.value !== undefined ? [{ backend: a.backend, settings: a.value }] : [],
  );
  const first = found[0];
  if (first === undefined) {
    const failed = answers.flatMap((a) => (a.ok ? [] : [a]));
    if (failed.length === answers.length) {
      const why = failed.map((a) => `${a.backend}: ${errorText(a.error)}`).join('; ');
      return {
        error: new BackendsUnavailableError(`no backend answered while looking up sequence ${name} (${why})`, {
          cause: failed[0]?.error,
        }),
        remember: false,
      };
    }
    // Remembered only when every backend said so: one that did not answer may have it.
    return { error: new SequenceNotFoundError(`sequence ${name} does not exist`), remember: failed.length === 0 };
  }
  if (found.some((f) => f.settings.retired === true)) return { error: retiredError(name), remember: true };
  for (const other of found) {
    const conflict = sameButMaxId(other.settings, first.settings)
      ? undefined
      : conflictOf(other.settings, first.settings);
    if (conflict !== undefined) {
      return {
        error: new SequenceConflictError(
          `sequence ${name} has ${describeSettings(first.settings)} on ${first.backend} but ${conflict} on ${other.backend}`,
        ),
        remember: false,
      };
    }
  }
  const needs = found.map((f) => newerNeeded(f.settings)).find((v) => v !== undefined);
  if (needs !== undefined) {
    const message = `sequence ${name} needs ticketd ${needs} or later; this process is ${THIS_VERSION}: ask another, or upgrade this one (docs/operating.md, "Upgrades and rollbacks")`;
    return { error: new UpgradeRequiredError(message), remember: true };
  }
  // Mid-widening the backends' maxIds differ: the smallest is the bound every one of them has.
  return {
    settings: found.reduce((least, f) => (f.settings.maxId < least.maxId ? f.settings : least), first.settings),
  };
}

/** The row to retire: any backend's (they agree on what matters); none answering, none having it, or a later ticketd's are errors. */
export function rowToRetire(name: string, answers: readonly Answer<SequenceSettings | undefined>[]): SequenceSettings {
  const row = rowsOf(answers)[0];
  if (row === undefined) {
    if (answers.every((a) => !a.ok))
      throw new BackendsUnavailableError(`no backend answered while looking up sequence ${name}`);
    throw new SequenceNotFoundError(`sequence ${name} does not exist`);
  }
  const needs = newerNeeded(row);
  if (needs !== undefined)
    throw new UpgradeRequiredError(
      `sequence ${name} needs ticketd ${needs} or later; this process is ${THIS_VERSION} and leaves it as it is`,
    );
  return row;
}
