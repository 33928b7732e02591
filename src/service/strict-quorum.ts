/**
 * Settling a strict sequence's lease operation on the first majority of the backends: a hung
 * backend among a minority costs what a dead one does (nothing), and a majority that can no longer
 * be reached is known as soon as enough backends have failed. Answers that come after the outcome
 * change nothing about it: they are only handed over, all together, for whatever must see every one
 * (a grant to give back).
 */
import type { Answer } from '../allocator/key-agreement.js';
import { majority } from '../core/strict.js';
import { errorText } from '../util/error-text.js';

/** The outcome of one operation on every backend. */
export interface Quorum<T> {
  /** True when a majority of the backends asked answered in a way that counts. */
  readonly reached: boolean;
  /** The answers that had come when the outcome was known, in the order they came. */
  readonly answers: readonly Answer<T>[];
  /** How many backends were asked: the majority is of all of them. */
  readonly asked: number;
  /** Every answer, once the last one has come. */
  readonly all: Promise<readonly Answer<T>[]>;
}

/**
 * Resolves once `counts` holds for a majority of `pending` (reached), or once so many answers have
 * come that do not count that a majority is out of reach (not reached).
 */
export function firstMajority<T>(
  pending: readonly Promise<Answer<T>>[],
  counts: (answer: Answer<T>) => boolean,
): Promise<Quorum<T>> {
  const asked = pending.length;
  const need = majority(asked);
  const answers: Answer<T>[] = [];
  const all = Promise.all(
    pending.map((p) => p.catch((error: unknown): Answer<T> => ({ backend: '?', ok: false, error }))),
  );
  return new Promise((settle) => {
    let counted = 0;
    let missed = 0;
    let settled = false;
    const decide = (reached: boolean): void => {
      if (settled) return;
      settled = true;
      settle({ reached, answers: [...answers], asked, all });
    };
    if (need > asked) decide(false);
    for (const p of pending) {
      void p.then(
        (answer) => {
          if (settled) return;
          answers.push(answer);
          if (counts(answer)) counted++;
          else missed++;
          if (counted >= need) decide(true);
          else if (asked - missed < need) decide(false);
        },
        (error: unknown) => {
          if (settled) return;
          answers.push({ backend: '?', ok: false, error });
          missed++;
          if (asked - missed < need) decide(false);
        },
      );
    }
  });
}

/** Why a quorum was not reached, for a log line or a 503: the backends that failed and those that had not answered. */
export function quorumFailures<T>(quorum: Quorum<T>): string {
  const failed = quorum.answers.flatMap((a) => (a.ok ? [] : [`${a.backend}: ${errorText(a.error)}`]));
  const silent = quorum.asked - quorum.answers.length;
  if (silent > 0) failed.push(`${silent} had not answered`);
  return failed.length === 0 ? 'every backend answered' : failed.join('; ');
}
