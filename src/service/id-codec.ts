/**
 * How a sequence's IDs are served, chosen once per sequence from its mode: ordered IDs as the cache
 * holds them, or opaque ones through the sequence's permutation (opaque-ids.ts). Nothing else
 * branches on the mode to issue or decode.
 */
import { IdPermutation } from 'ticketd-client';
import type { IdRange } from '../core/blocks.js';
import type { IdMode, SequenceSettings } from '../core/sequence.js';
import type { EncoderThread } from './encoder-thread.js';
import { OpaqueIds, type IssuedIds, type TakeRanges } from './opaque-ids.js';

/** A sequence's IDs between the cache and the client. */
export interface IdCodec {
  readonly ids: IdMode;
  /** `count` IDs without waiting, or undefined when the cache cannot cover them. */
  tryTake(count: number): IssuedIds | undefined;
  /** The served form of ranges taken from the cache, in order. */
  encode(ranges: readonly IdRange[]): IssuedIds;
  /** The ordered ID behind a served one. */
  decode(id: bigint): bigint;
  /** IDs taken from the cache and encoded, not yet handed out: cached, not issued. */
  readonly ahead: number;
}

/** Ordered IDs: the cache's ranges as they are. */
class OrderedIds implements IdCodec {
  readonly ids = 'ordered';
  readonly ahead = 0;
  readonly #take: TakeRanges;

  constructor(take: TakeRanges) {
    this.#take = take;
  }

  tryTake(count: number): IssuedIds | undefined {
    return this.#take(count);
  }

  encode(ranges: readonly IdRange[]): IssuedIds {
    return ranges;
  }

  decode(id: bigint): bigint {
    return id;
  }
}

/**
 * The codec of a sequence; `take` gives ordered ranges from its cache without waiting. With an
 * encoder thread, an opaque sequence's next IDs are encoded there.
 */
export function codecFor(settings: SequenceSettings, take: TakeRanges, thread?: EncoderThread): IdCodec {
  if (settings.ids !== 'opaque') return new OrderedIds(take);
  const { key, scheme } = settings;
  if (key === undefined || scheme === undefined)
    throw new Error(`opaque sequence ${settings.name} has no key or scheme`);
  const permutable = {
    name: settings.name,
    key,
    scheme,
    domain: { startAfter: settings.startAfter, maxId: settings.maxId },
  };
  return new OpaqueIds(
    new IdPermutation(key, settings, scheme),
    take,
    thread && ((ranges) => thread.encode(permutable, ranges)),
  );
}

/** Only the decoding of a sequence's IDs (migrate verify). */
export function decoderFor(settings: SequenceSettings): (id: bigint) => bigint {
  const codec = codecFor(settings, () => undefined);
  return (id) => codec.decode(id);
}
