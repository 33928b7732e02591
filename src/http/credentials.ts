/**
 * The admin and client tokens the HTTP layer checks, as digests with their names. One owner:
 * replace() swaps them whole (a reload after SIGHUP), so a request is judged by one set or the
 * other, never a mix.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ANY_SEQUENCE, type Secrets } from '../config/secrets.js';
import { ANONYMOUS_CALLER, unknownCaller, type Caller } from '../core/caller.js';

/** A configured token: its digest, and the caller it makes. */
interface Known {
  readonly digest: Buffer;
  readonly caller: Caller;
}

/** The tokens in force. */
export class Credentials {
  #known: readonly Known[] = [];
  #adminEnabled = false;
  /** Sequences with tokens of their own; `#anyGuarded` when `*` has tokens (every sequence is guarded). */
  #guarded: ReadonlySet<string> = new Set();
  #anyGuarded = false;
  /** Names of every configured token, for the per-token metric's labels. */
  #names: readonly string[] = [];

  constructor(secrets: Secrets) {
    this.replace(secrets);
  }

  /** The tokens from now on: requests already past their check are unaffected. */
  replace(secrets: Secrets): void {
    // One caller per distinct token: the same token may be an admin token and a client token of several sequences.
    const byToken = new Map<string, { name: string; admin: boolean; clientOf: Set<string> }>();
    const entry = (token: string, name: string): { name: string; admin: boolean; clientOf: Set<string> } => {
      let found = byToken.get(token);
      if (found === undefined) {
        found = { name, admin: false, clientOf: new Set() };
        byToken.set(token, found);
      }
      return found;
    };
    for (const { name, token } of secrets.adminTokens) entry(token, name).admin = true;
    for (const [sequence, tokens] of secrets.clientTokens)
      for (const { name, token } of tokens) entry(token, name).clientOf.add(sequence);
    this.#known = Object.freeze(
      [...byToken].map(([token, c]) => {
        const tokenDigest = digest(token);
        const bucket = tokenDigest.toString('base64');
        return {
          digest: tokenDigest,
          caller: Object.freeze({ name: c.name, admin: c.admin, peer: false, clientOf: c.clientOf, bucket }),
        };
      }),
    );
    this.#adminEnabled = secrets.adminTokens.length > 0;
    this.#guarded = new Set(
      [...secrets.clientTokens].filter(([s, t]) => s !== ANY_SEQUENCE && t.length > 0).map(([s]) => s),
    );
    this.#anyGuarded = (secrets.clientTokens.get(ANY_SEQUENCE) ?? []).length > 0;
    this.#names = Object.freeze([...new Set([...byToken.values()].map((c) => c.name))]);
  }

  /** False when no admin token is set: the admin API is off. */
  get adminEnabled(): boolean {
    return this.#adminEnabled;
  }

  /** The names of the configured tokens. */
  get names(): readonly string[] {
    return this.#names;
  }

  /** The caller an Authorization header's value stands for: anonymous without `Bearer <token>`, unknown for a token not configured. */
  callerOf(authorization: string | undefined): Caller {
    const token = bearerOf(authorization);
    if (token === undefined) return ANONYMOUS_CALLER;
    const given = digest(token);
    // Every token is compared, so the time taken does not tell which one came close.
    let found: Caller | undefined;
    for (const known of this.#known) if (timingSafeEqual(given, known.digest)) found ??= known.caller;
    return found ?? unknownCaller(given.toString('base64'));
  }

  /** True when the sequence (or worker pool) issues only to bearers of its client tokens (its own or `*`). */
  guarded(sequence: string): boolean {
    return this.#anyGuarded || this.#guarded.has(sequence);
  }

  /** True when the sequence has client tokens of its own (not only `*`). */
  hasOwnTokens(sequence: string): boolean {
    return this.#guarded.has(sequence);
  }
}

/** True when the caller holds one of the sequence's client tokens (its own or a `*` one). */
export function isClientOf(caller: Caller, sequence: string): boolean {
  return caller.clientOf.has(sequence) || caller.clientOf.has(ANY_SEQUENCE);
}

/** The token of an Authorization header's value `Bearer <token>`, or undefined. */
export function bearerOf(authorization: string | undefined): string | undefined {
  return authorization === undefined ? undefined : /^Bearer (\S+)$/.exec(authorization)?.[1];
}

/** Hashing gives equal-length buffers, so the comparison leaks neither length nor content. */
export function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
