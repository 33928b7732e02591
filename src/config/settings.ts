/**
 * The settings `serve` takes: their names, defaults and types, and where each is read from
 * (the environment variable or flag that messages name it by).
 */
import type { BackendAddress } from '../backend/backend-address.js';
import type { NamedToken, SecretFiles } from './secrets.js';
import type { LogLevel } from '../logger.js';
import type { AssumedLayout } from '../core/snowflake-lifetime.js';

/** Port the HTTP server listens on when neither --port nor TICKETD_PORT is given. */
export const DEFAULT_PORT = 8080;
/** Largest `count` one request may ask for, unless TICKETD_MAX_COUNT says otherwise. */
export const DEFAULT_MAX_COUNT = 10_000;
/** Upper bound on TICKETD_MAX_COUNT: one response of that many IDs is a few MB of JSON. */
export const MAX_MAX_COUNT = 1_000_000;
/** Upper bound on --workers. */
export const MAX_WORKERS = 64;
/** How often a front end writes its usage figures (TICKETD_USAGE_FLUSH_MS), and the bounds given values must keep. */
export const DEFAULT_USAGE_FLUSH_MS = 5000;
export const MIN_USAGE_FLUSH_MS = 100;
export const MAX_USAGE_FLUSH_MS = 600_000;
/** TICKETD_RUNS_OUT_WARNING_DAYS when unset: the time left below which a sequence is reported as running out. */
export const DEFAULT_RUNS_OUT_WARNING_DAYS = 14;
/** Shortest TICKETD_PEER_SECRET accepted. */
export const MIN_PEER_SECRET_CHARS = 16;

/** The settings `serve` runs with. */
export interface Config {
  readonly backends: readonly BackendAddress[];
  /** Accounts for schema and counter changes, one per backend in the same order; empty: use `backends`. */
  readonly adminBackends: readonly BackendAddress[];
  readonly port: number;
  /** Bearer tokens for admin routes, named (several while one is rotated in); empty disables them. */
  readonly adminTokens: readonly NamedToken[];
  /** Per sequence (or `*`), the named bearer tokens that may issue IDs; a sequence not listed is open. */
  readonly clientTokens: ReadonlyMap<string, readonly NamedToken[]>;
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
  /** How often this front end writes its usage figures to every backend (docs/operating.md, "How many IDs were lost, and why"). */
  readonly usageFlushMs: number;
  /** A sequence with less time left than this at its recent rate is running out (the alert compares the two gauges). */
  readonly runsOutWarningSeconds: number;
  /** What the Snowflake holders mint with (client options ticketd cannot see), for the time field's lifetime. */
  readonly snowflakeLayout: AssumedLayout;
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
  readonly adminBackendsFile?: string | undefined;
  readonly adminTokenFile?: string | undefined;
  readonly clientTokensFile?: string | undefined;
  readonly advertiseHost?: string | undefined;
  readonly peerPort?: string | number | undefined;
  readonly host?: string | undefined;
  readonly peerSecret?: string | undefined;
  readonly peerSecretFile?: string | undefined;
  readonly usageFlushMs?: string | number | undefined;
  readonly runsOutWarningDays?: string | number | undefined;
  readonly snowflakeEpoch?: string | undefined;
  readonly snowflakeTimeBits?: string | number | undefined;
}

/** The environment variable (or flag) each setting is read from, for messages. */
export const SETTING_NAMES: Readonly<Record<keyof ConfigInput, string>> = Object.freeze({
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
  adminBackendsFile: 'TICKETD_ADMIN_BACKENDS_FILE',
  adminTokenFile: 'TICKETD_ADMIN_TOKEN_FILE',
  clientTokensFile: 'TICKETD_CLIENT_TOKENS_FILE',
  advertiseHost: 'TICKETD_ADVERTISE_HOST',
  peerPort: 'TICKETD_PEER_PORT',
  host: 'TICKETD_HOST',
  peerSecret: 'TICKETD_PEER_SECRET',
  peerSecretFile: 'TICKETD_PEER_SECRET_FILE',
  usageFlushMs: 'TICKETD_USAGE_FLUSH_MS',
  runsOutWarningDays: 'TICKETD_RUNS_OUT_WARNING_DAYS',
  snowflakeEpoch: 'TICKETD_SNOWFLAKE_EPOCH',
  snowflakeTimeBits: 'TICKETD_SNOWFLAKE_TIME_BITS',
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
    adminBackendsFile: env.TICKETD_ADMIN_BACKENDS_FILE,
    adminTokenFile: env.TICKETD_ADMIN_TOKEN_FILE,
    clientTokensFile: env.TICKETD_CLIENT_TOKENS_FILE,
    advertiseHost: env.TICKETD_ADVERTISE_HOST,
    peerPort: env.TICKETD_PEER_PORT,
    host: env.TICKETD_HOST,
    peerSecret: env.TICKETD_PEER_SECRET,
    peerSecretFile: env.TICKETD_PEER_SECRET_FILE,
    usageFlushMs: env.TICKETD_USAGE_FLUSH_MS,
    runsOutWarningDays: env.TICKETD_RUNS_OUT_WARNING_DAYS,
    snowflakeEpoch: env.TICKETD_SNOWFLAKE_EPOCH,
    snowflakeTimeBits: env.TICKETD_SNOWFLAKE_TIME_BITS,
  };
}

/** `--max-count` for `maxCount`: the flag a setting is given by on the command line. */
export const flagName = (key: keyof ConfigInput): string => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
