/**
 * The encoder thread's code (encoder-thread.ts starts it): applies a sequence's permutation to
 * ranges of ordered IDs and writes the results as JSON strings, so the thread answering requests
 * only copies them. It keeps each sequence's permutation; what it encodes, and where the results
 * go, stays with the caller.
 */
import { parentPort } from 'node:worker_threads';
import { IdPermutation, type IdDomain, type PermutationScheme } from 'ticketd-client';
import { quoteIds } from '../util/decimal.js';

/** A sequence's permutation, sent once before its first ranges. */
export interface PermutationMessage {
  readonly kind: 'permutation';
  readonly name: string;
  readonly key: Uint8Array;
  readonly domain: IdDomain;
  readonly scheme: PermutationScheme;
}

/** Ranges to encode, as [first, count] runs, `total` IDs in all. */
export interface EncodeMessage {
  readonly kind: 'encode';
  readonly id: number;
  readonly name: string;
  readonly runs: readonly (readonly [bigint, number])[];
  readonly total: number;
}

/** The answer to an EncodeMessage: the IDs as QuotedIds. */
export interface EncodedMessage {
  readonly id: number;
  readonly bytes: Uint8Array;
  readonly starts: Uint32Array;
}

const permutations = new Map<string, IdPermutation>();

parentPort?.on('message', (m: PermutationMessage | EncodeMessage) => {
  if (m.kind === 'permutation') {
    permutations.set(m.name, new IdPermutation(m.key, m.domain, m.scheme));
    return;
  }
  const permutation = permutations.get(m.name)!;
  const ids = new BigUint64Array(m.total);
  let at = 0;
  for (const [first, count] of m.runs) {
    permutation.encodeRun(first, count, ids, at);
    at += count;
  }
  const { bytes, starts } = quoteIds(ids);
  const answer: EncodedMessage = { id: m.id, bytes, starts };
  parentPort!.postMessage(answer, [bytes.buffer as ArrayBuffer, starts.buffer as ArrayBuffer]);
});
