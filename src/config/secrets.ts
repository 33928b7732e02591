/**
 * Secrets: admin and client tokens as settings give them, and the `_FILE` settings (the official
 * MySQL image's and compose secrets' convention) that give them, and the backends, from files.
 * Token files are read again on SIGHUP (reloadSecrets).
 */
import { z } from 'zod';
import { TOKEN_NAME_PATTERN } from '../core/caller.js';
import { SEQUENCE_NAME_PATTERN } from '../core/sequence.js';
import { ConfigError } from '../core/errors.js';
import { errorText, shown as got } from '../util/error-text.js';
import { readTextFile } from '../util/read-file.js';

/** Tokens shorter than this are refused: they would be guessable. */
export const MIN_TOKEN_LENGTH = 16;
/** Key in TICKETD_CLIENT_TOKENS that applies to every sequence. */
export const ANY_SEQUENCE = '*';

/** Where the tokens were read from, for a reload (SIGHUP). */
export interface SecretFiles {
  readonly adminToken?: string;
  readonly clientTokens?: string;
}

/** A token and the name that logs and metrics show for it (`name=token`; a bare token gets a derived name). */
export interface NamedToken {
  readonly name: string;
  readonly token: string;
}

/** The secrets a reload may change. */
export interface Secrets {
  readonly adminTokens: readonly NamedToken[];
  readonly clientTokens: ReadonlyMap<string, readonly NamedToken[]>;
}

/**
 * Settings whose value may instead come from a file (`_FILE`, as compose and Kubernetes secrets hand
 * them over): every setting that holds a secret (a backend URL holds its password).
 */
export const FROM_FILE = [
  ['backends', 'backendsFile', 'TICKETD_BACKENDS'],
  ['adminBackends', 'adminBackendsFile', 'TICKETD_ADMIN_BACKENDS'],
  ['adminToken', 'adminTokenFile', 'TICKETD_ADMIN_TOKEN'],
  ['clientTokens', 'clientTokensFile', 'TICKETD_CLIENT_TOKENS'],
  ['peerSecret', 'peerSecretFile', 'TICKETD_PEER_SECRET'],
] as const;

const token = (name: string): z.ZodType<string> =>
  z.string().refine((t) => t.length >= MIN_TOKEN_LENGTH && !/\s/.test(t), {
    error: (issue) =>
      `${name} tokens must be at least ${MIN_TOKEN_LENGTH} characters without spaces; got one of ${String(issue.input).length}`,
  });

const clientToken = token('TICKETD_CLIENT_TOKENS');

/**
 * Splits `name=token` into its parts, or names a bare token `${prefix}-${n}`. A `=` only as a bare
 * token's trailing base64 padding, or after something that is not a name, keeps the token bare.
 */
function namedToken(text: string, prefix: string, n: number): NamedToken {
  const at = text.indexOf('=');
  const name = text.slice(0, at);
  const rest = text.slice(at + 1);
  if (at > 0 && TOKEN_NAME_PATTERN.test(name) && !/^=*$/.test(rest)) return Object.freeze({ name, token: rest });
  return Object.freeze({ name: `${prefix}-${n}`, token: text });
}

/** How a token's name must look, for messages. */
const NAME_RULE = `names match ${TOKEN_NAME_PATTERN.source}`;

/**
 * `seq:name=token,seq:token,*:name=token` in the environment, or `{"seq": ["name=token"]}` in a file.
 * A bare token is named `client-1`, `client-2`, … in the order given.
 */
export const clientTokens = z
  .union([z.string(), z.record(z.string(), z.union([z.string(), z.array(z.string())]))])
  .optional()
  .transform((value, ctx) => {
    const map = new Map<string, NamedToken[]>();
    let bare = 0;
    for (const [sequence, entry] of clientPairs(value, ctx)) {
      if (sequence !== ANY_SEQUENCE && !SEQUENCE_NAME_PATTERN.test(sequence)) {
        ctx.addIssue({
          code: 'custom',
          message: `TICKETD_CLIENT_TOKENS names sequence ${got(sequence)}, which does not match ${SEQUENCE_NAME_PATTERN.source} (or is *)`,
        });
        continue;
      }
      const named = namedToken(entry, 'client', bare + 1);
      if (named.token === entry) bare++;
      const checked = clientToken.safeParse(named.token);
      if (!checked.success) {
        for (const issue of checked.error.issues)
          ctx.addIssue({ code: 'custom', message: `${issue.message} (token ${named.name}; ${NAME_RULE})` });
        continue;
      }
      map.set(sequence, [...(map.get(sequence) ?? []), named]);
    }
    return map;
  });

/** The (sequence, entry) pairs of either form, in the order given. */
function clientPairs(
  value: string | Record<string, string | string[]> | undefined,
  ctx: z.RefinementCtx,
): [string, string][] {
  const pairs: [string, string][] = [];
  if (typeof value === 'string') {
    for (const part of value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')) {
      const at = part.indexOf(':');
      if (at <= 0) {
        ctx.addIssue({
          code: 'custom',
          message: `TICKETD_CLIENT_TOKENS entries must be sequence:name=token or sequence:token (or *:…); got one without a colon`,
        });
        continue;
      }
      pairs.push([part.slice(0, at), part.slice(at + 1)]);
    }
  } else if (value !== undefined) {
    for (const [sequence, tokens] of Object.entries(value))
      for (const t of typeof tokens === 'string' ? [tokens] : tokens) pairs.push([sequence, t]);
  }
  return pairs;
}

/** `name=token` or `token`, comma-separated (one being rotated in): each long enough. A bare token is named `admin-1`, `admin-2`, …. */
export const adminTokens = z
  .string()
  .optional()
  .transform((value, ctx) => {
    const entries = (value ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
    const tokens: NamedToken[] = [];
    let bare = 0;
    for (const entry of entries) {
      const named = namedToken(entry, 'admin', bare + 1);
      if (named.token === entry) bare++;
      tokens.push(named);
    }
    for (const t of tokens) {
      if (t.token.length < MIN_TOKEN_LENGTH)
        ctx.addIssue({
          code: 'custom',
          message: `TICKETD_ADMIN_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters (each, when several are given); got ${t.token.length} (token ${t.name}; ${NAME_RULE})`,
        });
    }
    return Object.freeze(tokens);
  });

/**
 * The `_FILE` settings: each file's content (its trailing newline trimmed) becomes the setting's
 * value in `merged`. Returns the problems: both forms given, or a file that cannot be read.
 */
export function readSecretFiles(merged: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const [setting, fileSetting, variable] of FROM_FILE) {
    const path = merged[fileSetting];
    if (path === undefined) continue;
    if (typeof path !== 'string') {
      problems.push(`${variable}_FILE must name a file; got ${got(path)}`);
      continue;
    }
    if (merged[setting] !== undefined) {
      problems.push(`${variable} and ${variable}_FILE are both set: give the value or the file, not both`);
      continue;
    }
    try {
      merged[setting] = secretFileContent(path);
    } catch (error) {
      problems.push(`${variable}_FILE: ${errorText(error)}`);
    }
  }
  return problems;
}

/**
 * A secret variable a command reads besides the settings (TICKETD_SOURCE): its value, or its
 * `_FILE`'s content. Throws a ConfigError when both are set or the file cannot be read.
 */
export function secretVariable(env: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  const value = env[name];
  const path = env[`${name}_FILE`];
  if (path === undefined || path === '') return value === '' ? undefined : value;
  if (value !== undefined && value !== '')
    throw new ConfigError(`${name} and ${name}_FILE are both set: give the value or the file, not both`);
  try {
    return secretFileContent(path);
  } catch (error) {
    throw new ConfigError(`${name}_FILE: ${errorText(error)}`, { cause: error });
  }
}

/** A secret file's content without its trailing newline (an editor's or `echo`'s). */
function secretFileContent(path: string): string {
  return readTextFile(path).replace(/\r?\n$/, '');
}

/**
 * The tokens as their files hold them now (SIGHUP): a setting given inline keeps its value. Throws
 * a ConfigError naming the file when one cannot be read or holds a bad token; the caller keeps
 * what it had.
 */
export function reloadSecrets(files: SecretFiles, current: Secrets): Secrets {
  const input: Record<string, unknown> = { adminTokenFile: files.adminToken, clientTokensFile: files.clientTokens };
  const problems = readSecretFiles(input);
  const parsed = z.object({ adminToken: adminTokens, clientTokens }).safeParse(input);
  if (!parsed.success) problems.push(...parsed.error.issues.map((i) => i.message));
  if (problems.length > 0) throw new ConfigError(problems.join('; '));
  return Object.freeze({
    adminTokens: files.adminToken === undefined ? current.adminTokens : parsed.data!.adminToken,
    clientTokens: files.clientTokens === undefined ? current.clientTokens : parsed.data!.clientTokens,
  });
}
