/**
 * A sequence's codec as the client sees it: the identity for an ordered sequence, or the
 * sequence's permutation (under the scheme stored with its key) for an opaque one.
 */
import type { TlsMaterial } from './requests.js';
import { IdPermutation } from './id-permutation.js';
import { FIRST_PERMUTATION_SCHEME, isPermutationScheme } from './id-scheme.js';
import { askInTurn, getJson, requestInit, type Attempt } from './requests.js';

/** A sequence's mapping between ordered and served IDs: the identity for an ordered sequence. */
export interface IdCodec {
  readonly ids: 'ordered' | 'opaque';
  /** The ID ticketd serves for an ordered one. */
  encode(ordered: bigint): bigint;
  /** The ordered ID behind one ticketd served. */
  decode(id: bigint): bigint;
}

/** Where and how to ask for a sequence's codec. */
export interface CodecOptions extends TlsMaterial {
  readonly urls: readonly string[];
  readonly sequence: string;
  readonly token?: string | undefined;
  readonly timeoutMs?: number | undefined;
}

const ORDERED: IdCodec = { ids: 'ordered', encode: (id) => id, decode: (id) => id };

/** What `GET …/id-key` answers: `key` for feistel-aes256-v1 (what 0.4 clients read), `schemeKey` for later schemes. */
interface KeyAnswer {
  readonly scheme: string;
  readonly startAfter: string;
  readonly maxId: string;
  readonly key?: string;
  readonly schemeKey?: string;
}

/** Fetches the codec of a sequence from one of `urls` (the key of an opaque one needs its own client token). */
export async function fetchIdCodec(options: CodecOptions): Promise<IdCodec> {
  const answer = await askInTurn(
    options.urls,
    0,
    `no ticketd gave the codec of ${options.sequence}`,
    async (url): Promise<Attempt<IdCodec>> => {
      const base = `${url}/v1/sequences/${encodeURIComponent(options.sequence)}`;
      const settings = await getJson<{ ids?: unknown }>(base, requestInit(options));
      if (!settings.ok) return settings;
      const { ids } = settings.value;
      if (ids === 'ordered') return { ok: true, value: ORDERED };
      // Guessing "ordered" for a mode it does not know would hand out IDs another client may hold.
      if (ids !== 'opaque')
        return {
          ok: false,
          error: `sequence ${options.sequence} has ids ${JSON.stringify(ids)}, unknown to this version; upgrade ticketd-client`,
          final: true,
        };
      const key = await getJson<KeyAnswer>(
        `${base}/id-key`,
        requestInit(options),
        (b) => b.scheme !== undefined && b.startAfter !== undefined && b.maxId !== undefined,
      );
      if (!key.ok) return key;
      const { scheme, startAfter, maxId } = key.value;
      if (!isPermutationScheme(scheme))
        return {
          ok: false,
          error: `sequence ${options.sequence} uses opaque ID scheme ${JSON.stringify(scheme)}, unknown to this version; upgrade ticketd-client`,
          final: true,
        };
      const encoded = scheme === FIRST_PERMUTATION_SCHEME ? key.value.key : key.value.schemeKey;
      if (encoded === undefined) return { ok: false, error: `ticketd sent no key for scheme ${scheme}`, final: true };
      const permutation = new IdPermutation(
        Buffer.from(encoded, 'base64url'),
        { startAfter: BigInt(startAfter), maxId: BigInt(maxId) },
        scheme,
      );
      const opaque: OpaqueCodec = {
        ids: 'opaque',
        permutation,
        encode: (id) => permutation.encode(id),
        decode: (id) => permutation.decode(id),
      };
      return { ok: true, value: opaque };
    },
  );
  return answer.value;
}

/** An opaque sequence's codec, with the permutation the client encodes its blocks with. */
export interface OpaqueCodec extends IdCodec {
  readonly permutation: IdPermutation;
}
