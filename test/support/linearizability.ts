/**
 * The linearizability checker of strict sequences (docs/strict-sequences.md, "The promise"): every
 * answered request with the times it was sent and answered, by one clock. If answer A was received
 * before request B was sent, every ID of B must be greater than every ID of A; an answer's IDs
 * increase; no ID twice.
 */

/** One answered request: when it was sent and when its answer was read (one process's monotonic ms), and its IDs. */
export interface Operation {
  readonly sentAt: number;
  readonly answeredAt: number;
  readonly ids: readonly bigint[];
  /** Which front end answered (for the report). */
  readonly via: string;
}

/** A pair out of real-time order: `after` was sent once `before` was answered, yet holds an ID not above all of it. */
export interface Violation {
  readonly before: Operation;
  readonly after: Operation;
}

/** What the checker found. */
export interface Verdict {
  readonly operations: number;
  readonly ids: number;
  readonly outOfOrder: number;
  readonly examples: readonly Violation[];
  readonly repeated: readonly bigint[];
  /** Answers whose own IDs do not increase. */
  readonly unsorted: number;
}

/**
 * Checks a history in O(n log n): operations by send time, each against the highest ID of every
 * operation answered before it was sent (the answered ones swept in order of answer time).
 */
export function checkLinearizable(history: readonly Operation[]): Verdict {
  const bySend = history.filter((o) => o.ids.length > 0).sort((a, b) => a.sentAt - b.sentAt);
  const byAnswer = [...bySend].sort((a, b) => a.answeredAt - b.answeredAt);
  let swept = 0;
  let highest: Operation | undefined;
  let outOfOrder = 0;
  const examples: Violation[] = [];
  for (const op of bySend) {
    while (swept < byAnswer.length && byAnswer[swept]!.answeredAt < op.sentAt) {
      const done = byAnswer[swept++]!;
      if (highest === undefined || maxOf(done) > maxOf(highest)) highest = done;
    }
    if (highest !== undefined && minOf(op) <= maxOf(highest)) {
      outOfOrder++;
      if (examples.length < 5) examples.push({ before: highest, after: op });
    }
  }
  const seen = new Set<bigint>();
  const repeated: bigint[] = [];
  let ids = 0;
  let unsorted = 0;
  for (const op of bySend) {
    for (let i = 0; i < op.ids.length; i++) {
      const id = op.ids[i]!;
      ids++;
      if (seen.has(id)) repeated.push(id);
      seen.add(id);
      if (i > 0 && id <= op.ids[i - 1]!) unsorted++;
    }
  }
  return { operations: bySend.length, ids, outOfOrder, examples, repeated, unsorted };
}

/** The verdict in one line, with the first pair out of order if any. */
export function describeVerdict(v: Verdict): string {
  const example = v.examples[0];
  const pair =
    example === undefined
      ? ''
      : `; e.g. ${example.before.via} answered up to ${maxOf(example.before)} at ${example.before.answeredAt.toFixed(1)} ms, then ${example.after.via} sent at ${example.after.sentAt.toFixed(1)} ms got ${minOf(example.after)}`;
  return `${v.operations} answers, ${v.ids} IDs: ${v.outOfOrder} out of real-time order, ${v.repeated.length} repeated, ${v.unsorted} unsorted within an answer${pair}`;
}

// Min and max over every ID, not the ends: an answer out of order within itself must not hide a pair.
function maxOf(op: Operation): bigint {
  return op.ids.reduce((a, b) => (b > a ? b : a));
}

function minOf(op: Operation): bigint {
  return op.ids.reduce((a, b) => (b < a ? b : a));
}
