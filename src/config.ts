/**
 * Configuration: flags over environment variables over an optional JSON config file, validated
 * once with zod at start, every problem reported together in one line, then frozen.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';
import { ConfigError } from './errors.js';
import { parseBackendUrl, type BackendAddress } from './backend/backend-address.js';
import { parseBackendTls, type TlsDefaults } from './backend/backend-tls.js';
import { unreadableFile } from './util/read-file.js';
import { adminTokens, clientTokens, readSecretFiles, type SecretFiles } from './secrets.js';
import { LOG_LEVELS, type LogLevel } from './logger.js';
import { errorText, shown as got } from './util/error-text.js';

/** Port the HTTP server listens on when neither --port nor TICKETD_PORT is given. */
export const DEFAULT_PORT = 8080;
/** Largest `count` one request may ask for, unless TICKETD_MAX_COUNT says otherwise. */
export const DEFAULT_MAX_COUNT = 10_000;
/** Upper bound on TICKETD_MAX_COUNT: one response of that many IDs is a few MB of JSON. */
export const MAX_MAX_COUNT = 1_000_000;
/** Upper bound on --workers. */
export const MAX_WORKERS = 64;
/** Shortest TICKETD_PEER_SECRET accepted. */
export const MIN_PEER_SECRET_CHARS = 16;

/** The settings `serve` runs with. */
export interface Config {
  readonly backends: readonly BackendAddress[];
  /** Accounts for schema and counter changes, one per backend in the same order; empty: use `backends`. */
  readonly adminBackends: readonly BackendAddress[];
  readonly port: number;
  /** Bearer tokens for admin routes (several while one is rotated in); empty disables them. */
  readonly adminTokens: readonly string[];
  /** Per sequence (or `*`), the bearer tokens that may issue IDs; a sequence not listed is open. */
  readonly clientTokens: ReadonlyMap<string, readonly string[]>;
  /** HTTPS for clients: PEM files of the certificate and key, and the CA client certificates must chain to. */
  readonly tls: HttpsFiles | undefined;
  /** Files the secrets came from (TICKETD_*_FILE), read again on a reload. */
  readonly secretFiles: SecretFiles;
  /** Requests per second per token (or per address without one); undefined: no limit. */
  readonly rateLimitPerSecond: number | undefined;
  readonly maxCount: number;
  readonly logLevel: LogLevel;
  /** HTTP worker processes (node:cluster); 1 serves from this process. */
  readonly workers: number;
  /** Demos only: accept backends without crash-safe durability settings. */
  readonly allowUnsafeDurability: boolean;
  /** What to do with a backend whose counter went back: advance it past the mark, or keep it out. */
  readonly onRegression: 'advance' | 'quarantine';
  /** When no peer can take a ticket's claim: serve on the process marks (`preferred`) or refuse (`required`). */
  readonly claims: 'preferred' | 'required';
  /** The host other front ends reach this one at, for strict sequences' forwarded calls. */
  readonly advertiseHost: string;
  /** The port of this process's own listener for those calls; 0: any free one. */
  readonly peerPort: number;
  /** The address every listener binds to; undefined: every interface. */
  readonly host: string | undefined;
  /** What proves a forwarded call comes from a front end of this fleet; undefined: derived from the backends (service/peer-proof.ts). */
  readonly peerSecret: string | undefined;
}

/** The PEM files `serve` listens with (TICKETD_TLS_CERT, TICKETD_TLS_KEY, TICKETD_TLS_CLIENT_CA). */
export interface HttpsFiles {
  readonly cert: string;
  readonly key: string;
  readonly clientCa: string | undefined;
}

/** Values as given, by setting. Strings from env and flags; a config file may also use numbers, lists and objects. */
export interface ConfigInput {
  readonly backends?: string | readonly string[] | undefined;
  readonly adminBackends?: string | readonly string[] | undefined;
  readonly port?: string | number | undefined;
  readonly adminToken?: string | undefined;
  readonly clientTokens?: string | Readonly<Record<string, string | readonly string[]>> | undefined;
  readonly rateLimit?: string | number | undefined;
  readonly maxCount?: string | number | undefined;
  readonly logLevel?: string | undefined;
  readonly workers?: string | number | undefined;
  readonly allowUnsafeDurability?: boolean | undefined;
  readonly onRegression?: string | undefined;
  readonly claims?: string | undefined;
  readonly backendSslMode?: string | undefined;
  readonly backendSslCa?: string | undefined;
  readonly backendSslCert?: string | undefined;
  readonly backendSslKey?: string | undefined;
  readonly tlsCert?: string | undefined;
  readonly tlsKey?: string | undefined;
  readonly tlsClientCa?: string | undefined;
  readonly backendsFile?: string | undefined;
  readonly adminTokenFile?: string | undefined;
  readonly clientTokensFile?: string | undefined;
  readonly advertiseHost?: string | undefined;
  readonly peerPort?: string | number | undefined;
  readonly host?: string | undefined;
  readonly peerSecret?: string | undefined;
}

/** The environment variable (or flag) each setting is read from, for messages. */
const SETTING_NAMES: Readonly<Record<keyof ConfigInput, string>> = Object.freeze({
  backends: 'TICKETD_BACKENDS',
  adminBackends: 'TICKETD_ADMIN_BACKENDS',
  port: 'TICKETD_PORT',
  adminToken: 'TICKETD_ADMIN_TOKEN',
  clientTokens: 'TICKETD_CLIENT_TOKENS',
  rateLimit: 'TICKETD_RATE_LIMIT',
  maxCount: 'TICKETD_MAX_COUNT',
  logLevel: 'TICKETD_LOG_LEVEL',
  workers: 'TICKETD_WORKERS',
  allowUnsafeDurability: '--allow-unsafe-durability',
  onRegression: 'TICKETD_ON_REGRESSION',
  claims: 'TICKETD_CLAIMS',
  backendSslMode: 'TICKETD_BACKEND_SSL_MODE',
  backendSslCa: 'TICKETD_BACKEND_SSL_CA',
  backendSslCert: 'TICKETD_BACKEND_SSL_CERT',
  backendSslKey: 'TICKETD_BACKEND_SSL_KEY',
  tlsCert: 'TICKETD_TLS_CERT',
  tlsKey: 'TICKETD_TLS_KEY',
  tlsClientCa: 'TICKETD_TLS_CLIENT_CA',
  backendsFile: 'TICKETD_BACKENDS_FILE',
  adminTokenFile: 'TICKETD_ADMIN_TOKEN_FILE',
  clientTokensFile: 'TICKETD_CLIENT_TOKENS_FILE',
  advertiseHost: 'TICKETD_ADVERTISE_HOST',
  peerPort: 'TICKETD_PEER_PORT',
  host: 'TICKETD_HOST',
  peerSecret: 'TICKETD_PEER_SECRET',
});

/** Reads TICKETD_* variables from an environment. */
export function configInputFromEnv(env: Record<string, string | undefined>): ConfigInput {
  return {
    backends: env.TICKETD_BACKENDS,
    adminBackends: env.TICKETD_ADMIN_BACKENDS,
    port: env.TICKETD_PORT,
    adminToken: env.TICKETD_ADMIN_TOKEN,
    clientTokens: env.TICKETD_CLIENT_TOKENS,
    rateLimit: env.TICKETD_RATE_LIMIT,
    maxCount: env.TICKETD_MAX_COUNT,
    logLevel: env.TICKETD_LOG_LEVEL,
    workers: env.TICKETD_WORKERS,
    onRegression: env.TICKETD_ON_REGRESSION,
    claims: env.TICKETD_CLAIMS,
    backendSslMode: env.TICKETD_BACKEND_SSL_MODE,
    backendSslCa: env.TICKETD_BACKEND_SSL_CA,
    backendSslCert: env.TICKETD_BACKEND_SSL_CERT,
    backendSslKey: env.TICKETD_BACKEND_SSL_KEY,
    tlsCert: env.TICKETD_TLS_CERT,
    tlsKey: env.TICKETD_TLS_KEY,
    tlsClientCa: env.TICKETD_TLS_CLIENT_CA,
    backendsFile: env.TICKETD_BACKENDS_FILE,
    adminTokenFile: env.TICKETD_ADMIN_TOKEN_FILE,
    clientTokensFile: env.TICKETD_CLIENT_TOKENS_FILE,
    advertiseHost: env.TICKETD_ADVERTISE_HOST,
    peerPort: env.TICKETD_PEER_PORT,
    host: env.TICKETD_HOST,
    peerSecret: env.TICKETD_PEER_SECRET,
  };
}

/** Reads a JSON config file whose keys are the settings' camelCase names (`backends`, `port`, …). */
export function readConfigFile(path: string): ConfigInput {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`TICKETD_CONFIG: cannot read ${path} as JSON: ${errorText(error)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ConfigError(`TICKETD_CONFIG: ${path} must hold a JSON object`);
  const unknown = Object.keys(parsed).filter((k) => !(k in SETTING_NAMES));
  if (unknown.length > 0) {
    throw new ConfigError(`TICKETD_CONFIG: ${path} has unknown setting(s) ${unknown.join(', ')}; allowed: ${Object.keys(SETTING_NAMES).join(', ')}`);
  }
  return parsed as ConfigInput;
}

/** An integer setting given as a decimal string or (from a file) a number. */
const integer = (name: string, min: number, max: number): z.ZodType<number> =>
  z.union([z.number(), z.string()]).transform((value, ctx) => {
    const n = typeof value === 'number' ? value : /^[0-9]+$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(n) || n < min || n > max) {
      ctx.addIssue({ code: 'custom', message: `${name} must be an integer from ${min} to ${max}; got ${got(value)}` });
      return z.NEVER;
    }
    return n;
  });

/** A list of backend URLs, as one comma-separated string or (from a file) an array; `tls` fills in what a URL's query leaves out. */
const backendList = (name: string, required: boolean, tls: TlsDefaults): z.ZodType<BackendAddress[]> =>
  z.union([z.string(), z.array(z.string())]).optional().transform((value, ctx) => {
    const parts = (Array.isArray(value) ? value : (value ?? '').split(',')).map((s) => s.trim()).filter((s) => s !== '');
    if (parts.length === 0) {
      if (required) ctx.addIssue({ code: 'custom', message: `${name} is not set (comma-separated mysql://user:pass@host:port/db URLs)` });
      return [];
    }
    const backends: BackendAddress[] = [];
    for (const part of parts) {
      const parsed = parseBackendUrl(part, tls);
      if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: `${name}: ${parsed}` });
      else backends.push(parsed);
    }
    const labels = backends.map((b) => b.label);
    const repeated = labels.filter((l, i) => labels.indexOf(l) !== i);
    if (repeated.length > 0) ctx.addIssue({ code: 'custom', message: `${name} lists ${repeated[0]} more than once` });
    return backends;
  });

/** One of two policies by name; the first is the default. */
function policy<T extends string>(name: string, allowed: readonly [T, T]): z.ZodType<T> {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      const chosen = value ?? allowed[0];
      if (!(allowed as readonly string[]).includes(chosen)) {
        ctx.addIssue({ code: 'custom', message: `${name} must be ${allowed.join(' or ')}; got ${got(value)}` });
        return z.NEVER;
      }
      return chosen as T;
    });
}

/** A PEM file path, checked readable at start. */
const pemFile = (name: string): z.ZodType<string | undefined> =>
  z
    .string()
    .optional()
    .transform((path, ctx) => {
      if (path === undefined) return undefined;
      const problem = unreadableFile(path);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `${name}: ${problem}` });
      return path;
    });

/** TICKETD_BACKEND_SSL_*, judged as a URL's own parameters would be. */
const tlsDefaults = z
  .object({ mode: z.string().optional(), ca: z.string().optional(), cert: z.string().optional(), key: z.string().optional() })
  .transform((given, ctx) => {
    const query = new URLSearchParams();
    const parsed = parseBackendTls(query, given);
    if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: `TICKETD_BACKEND_SSL_*: ${parsed.replace(/\bssl-(mode|ca|cert|key)\b/g, (_m, f: string) => `TICKETD_BACKEND_SSL_${f.toUpperCase()}`)}` });
    return given;
  });

const schema = (tls: TlsDefaults) => z.object({
  backends: backendList(SETTING_NAMES.backends, true, tls),
  adminBackends: backendList(SETTING_NAMES.adminBackends, false, tls),
  port: integer(SETTING_NAMES.port, 0, 65535).optional().transform((v) => v ?? DEFAULT_PORT),
  adminToken: adminTokens,
  clientTokens,
  tlsCert: pemFile(SETTING_NAMES.tlsCert),
  tlsKey: pemFile(SETTING_NAMES.tlsKey),
  tlsClientCa: pemFile(SETTING_NAMES.tlsClientCa),
  rateLimit: z
    .union([z.number(), z.string()])
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return undefined;
      const n = Number(value);
      if (!Number.isFinite(n) || n <= 0 || (typeof value === 'string' && !/^[0-9]+(\.[0-9]+)?$/.test(value))) {
        ctx.addIssue({ code: 'custom', message: `TICKETD_RATE_LIMIT must be a positive number of requests per second; got ${got(value)}` });
        return z.NEVER;
      }
      return n;
    }),
  maxCount: integer(SETTING_NAMES.maxCount, 1, MAX_MAX_COUNT).optional().transform((v) => v ?? DEFAULT_MAX_COUNT),
  logLevel: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return 'info' as LogLevel;
      if (!(LOG_LEVELS as readonly string[]).includes(value)) {
        ctx.addIssue({ code: 'custom', message: `TICKETD_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got ${got(value)}` });
        return z.NEVER;
      }
      return value as LogLevel;
    }),
  workers: integer(SETTING_NAMES.workers, 1, MAX_WORKERS).optional().transform((v) => v ?? 1),
  allowUnsafeDurability: z.boolean().optional().transform((v) => v ?? false),
  onRegression: policy(SETTING_NAMES.onRegression, ['advance', 'quarantine'] as const),
  claims: policy(SETTING_NAMES.claims, ['preferred', 'required'] as const),
  advertiseHost: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return '127.0.0.1';
      if (!/^[A-Za-z0-9.-]{1,253}$|^\[[0-9A-Fa-f:.]+\]$/.test(value)) {
        ctx.addIssue({ code: 'custom', message: `TICKETD_ADVERTISE_HOST must be a host name or address other front ends reach this one at (an IPv6 address in brackets); got ${got(value)}` });
        return z.NEVER;
      }
      return value;
    }),
  peerPort: integer(SETTING_NAMES.peerPort, 0, 65535).optional().transform((v) => v ?? 0),
  host: z
    .string()
    .optional()
    .refine((value) => value === undefined || isIP(value) !== 0 || /^[A-Za-z0-9.-]{1,253}$/.test(value), { message: 'TICKETD_HOST must be an address or host name to listen on (127.0.0.1, ::1, 0.0.0.0, a local interface\'s address)' }),
  peerSecret: z
    .string()
    .optional()
    .refine((value) => value === undefined || value.length >= MIN_PEER_SECRET_CHARS, { message: `TICKETD_PEER_SECRET must be at least 16 characters (the same on every front end of the fleet)` }),
});

/** `--max-count` for `maxCount`: the flag a setting is given by on the command line. */
const flagName = (key: keyof ConfigInput): string => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** Merges flags over env over file and validates; throws one ConfigError naming every bad setting. */
export function loadConfig(env: ConfigInput, flags: ConfigInput = {}, file: ConfigInput = {}): Config {
  const merged: Record<string, unknown> = {};
  const fromFlag = new Set<keyof ConfigInput>();
  for (const key of Object.keys(SETTING_NAMES) as (keyof ConfigInput)[]) {
    const value = flags[key] ?? env[key] ?? file[key];
    if (value !== undefined && value !== '') merged[key] = value;
    if (flags[key] !== undefined && flags[key] !== '') fromFlag.add(key);
  }
  const problems = readSecretFiles(merged);
  const defaults = tlsDefaults.safeParse({ mode: merged.backendSslMode, ca: merged.backendSslCa, cert: merged.backendSslCert, key: merged.backendSslKey });
  if (!defaults.success) problems.push(...defaults.error.issues.map((i) => i.message));
  const parsed = schema(defaults.success ? defaults.data : {}).safeParse(merged);
  if (!parsed.success || problems.length > 0) {
    const messages = (parsed.error?.issues ?? []).map((issue) => {
      const key = issue.path[0] as keyof ConfigInput | undefined;
      if (key === undefined) return issue.message;
      // Our own checks name the setting; zod's type errors (a file giving a number for a URL) get the name here.
      const message = issue.code === 'custom' ? issue.message : `${SETTING_NAMES[key]}: ${issue.message}`;
      // A value given as a flag is named as the flag the user typed.
      return fromFlag.has(key) ? message.replace(SETTING_NAMES[key], flagName(key)) : message;
    });
    throw new ConfigError([...problems, ...messages].join('; '));
  }
  const c = parsed.data!;
  if (c.adminBackends.length > 0) checkAdminBackends(c.backends, c.adminBackends);
  if ((c.tlsCert === undefined) !== (c.tlsKey === undefined)) throw new ConfigError('TICKETD_TLS_CERT and TICKETD_TLS_KEY go together: HTTPS needs both the certificate and its key');
  if (c.tlsClientCa !== undefined && c.tlsCert === undefined) throw new ConfigError('TICKETD_TLS_CLIENT_CA needs TICKETD_TLS_CERT and TICKETD_TLS_KEY: client certificates are asked for over HTTPS only');
  if (c.peerPort !== 0 && c.workers > 1) throw new ConfigError(`TICKETD_PEER_PORT=${c.peerPort} cannot be shared by ${c.workers} worker processes: each listens on a port of its own; leave it unset (0) with TICKETD_WORKERS`);
  if (c.claims === 'required' && c.backends.length < 2) {
    // A claim goes to a peer of the backend a ticket came from; one backend has none.
    throw new ConfigError(`TICKETD_CLAIMS=required needs at least two backends (claims are kept on a peer); TICKETD_BACKENDS has ${c.backends.length}`);
  }
  return Object.freeze({
    backends: Object.freeze(c.backends),
    adminBackends: Object.freeze(c.adminBackends),
    port: c.port,
    adminTokens: c.adminToken,
    clientTokens: c.clientTokens,
    tls: c.tlsCert === undefined || c.tlsKey === undefined ? undefined : Object.freeze({ cert: c.tlsCert, key: c.tlsKey, clientCa: c.tlsClientCa }),
    secretFiles: Object.freeze({
      ...(typeof merged.adminTokenFile === 'string' && { adminToken: merged.adminTokenFile }),
      ...(typeof merged.clientTokensFile === 'string' && { clientTokens: merged.clientTokensFile }),
    }),
    rateLimitPerSecond: c.rateLimit,
    maxCount: c.maxCount,
    logLevel: c.logLevel,
    workers: c.workers,
    allowUnsafeDurability: c.allowUnsafeDurability,
    onRegression: c.onRegression,
    claims: c.claims,
    advertiseHost: c.advertiseHost,
    peerPort: c.peerPort,
    host: c.host,
    peerSecret: c.peerSecret,
  });
}

function checkAdminBackends(backends: readonly BackendAddress[], admin: readonly BackendAddress[]): void {
  const serving = backends.map((b) => b.label).join(',');
  const given = admin.map((b) => b.label).join(',');
  if (serving !== given) {
    throw new ConfigError(`TICKETD_ADMIN_BACKENDS must name the same servers as TICKETD_BACKENDS, in the same order, with other accounts; got ${given} for ${serving}`);
  }
}
