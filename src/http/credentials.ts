/**
 * The admin and client tokens the HTTP layer checks, as digests. One owner: replace() swaps them
 * whole (a reload after SIGHUP), so a request is judged by one set or the other, never a mix.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ANY_SEQUENCE, type Secrets } from '../config/secrets.js';

const NONE: readonly Buffer[] = Object.freeze([]);

/** The tokens in force. */
export class Credentials {
  #admin: readonly Buffer[] = NONE;
  /** Per sequence, its own tokens and the `*` ones; `#any` for a sequence not listed. */
  #client = new Map<string, readonly Buffer[]>();
  #own = new Map<string, readonly Buffer[]>();
  #any: readonly Buffer[] = NONE;

  constructor(secrets: Secrets) {
    this.replace(secrets);
  }

  /** The tokens from now on: requests already past their check are unaffected. */
  replace(secrets: Secrets): void {
    const own = new Map(
      [...secrets.clientTokens]
        .filter(([sequence]) => sequence !== ANY_SEQUENCE)
        .map(([sequence, list]) => [sequence, Object.freeze(list.map(digest))]),
    );
    const any = Object.freeze((secrets.clientTokens.get(ANY_SEQUENCE) ?? []).map(digest));
    this.#client = new Map([...own].map(([sequence, list]) => [sequence, Object.freeze([...list, ...any])]));
    this.#own = own;
    this.#any = any;
    this.#admin = Object.freeze(secrets.adminTokens.map(digest));
  }

  /** False when no admin token is set: the admin API is off. */
  get adminEnabled(): boolean {
    return this.#admin.length > 0;
  }

  /** True when the token is one of the admin tokens. */
  isAdmin(token: string): boolean {
    return isOneOf(token, this.#admin);
  }

  /** The digests that may issue from the sequence (its own and `*`); empty: issuing is open. */
  clientTokensOf(sequence: string): readonly Buffer[] {
    return this.#client.get(sequence) ?? this.#any;
  }

  /** The digests of the sequence's own tokens (not `*`). */
  ownTokensOf(sequence: string): readonly Buffer[] {
    return this.#own.get(sequence) ?? NONE;
  }
}

/** True when the token's digest is one of `allowed`. */
export function isOneOf(token: string, allowed: readonly Buffer[]): boolean {
  const given = digest(token);
  // Every allowed token is compared, so the time taken does not tell which one came close.
  let ok = false;
  for (const expected of allowed) ok = timingSafeEqual(given, expected) || ok;
  return ok;
}

/** Hashing gives equal-length buffers, so the comparison leaks neither length nor content. */
export function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
