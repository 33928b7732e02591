/**
 * The zod schema every setting is validated with: each check names its setting in its message,
 * so one ConfigError can report every problem together.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { parseBackendUrl, type BackendAddress } from '../backend/backend-address.js';
import { parseBackendTls, type TlsDefaults } from '../backend/backend-tls.js';
import { unreadableFile } from '../util/read-file.js';
import { adminTokens, clientTokens } from './secrets.js';
import { LOG_LEVELS, type LogLevel } from '../logger.js';
import { shown as got } from '../util/error-text.js';
import {
  DEFAULT_MAX_COUNT,
  DEFAULT_PORT,
  MAX_MAX_COUNT,
  DEFAULT_USAGE_FLUSH_MS,
  MIN_USAGE_FLUSH_MS,
  MAX_USAGE_FLUSH_MS,
  MAX_WORKERS,
  DEFAULT_RUNS_OUT_WARNING_DAYS,
  MIN_PEER_SECRET_CHARS,
  SETTING_NAMES,
} from './settings.js';
import { DEFAULT_SNOWFLAKE_EPOCH_MS, MAX_TIME_BITS } from '../core/snowflake-lifetime.js';

/** Longest TICKETD_RUNS_OUT_WARNING_DAYS: ten years. */
const MAX_RUNS_OUT_WARNING_DAYS = 3650;

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
  z
    .union([z.string(), z.array(z.string())])
    .optional()
    .transform((value, ctx) => {
      const parts = (Array.isArray(value) ? value : (value ?? '').split(','))
        .map((s) => s.trim())
        .filter((s) => s !== '');
      if (parts.length === 0) {
        if (required)
          ctx.addIssue({
            code: 'custom',
            message: `${name} is not set (comma-separated mysql://user:pass@host:port/db URLs)`,
          });
        return [];
      }
      const backends: BackendAddress[] = [];
      for (const [i, part] of parts.entries()) {
        const parsed = parseBackendUrl(part, tls, i);
        if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: `${name}: ${parsed}` });
        else backends.push(parsed);
      }
      const labels = backends.map((b) => b.label);
      const repeated = labels.filter((l, i) => labels.indexOf(l) !== i);
      if (repeated.length > 0) ctx.addIssue({ code: 'custom', message: `${name} lists ${repeated[0]} more than once` });
      const names = backends.map((b) => b.name);
      const named = names.filter((n, i) => names.indexOf(n) !== i);
      if (named.length > 0)
        ctx.addIssue({ code: 'custom', message: `${name} names two backends ${named[0]}: each name=… must be unique` });
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
export const tlsDefaults = z
  .object({
    mode: z.string().optional(),
    ca: z.string().optional(),
    cert: z.string().optional(),
    key: z.string().optional(),
  })
  .transform((given, ctx) => {
    const query = new URLSearchParams();
    const parsed = parseBackendTls(query, given);
    if (typeof parsed === 'string')
      ctx.addIssue({
        code: 'custom',
        message: `TICKETD_BACKEND_SSL_*: ${parsed.replace(/\bssl-(mode|ca|cert|key)\b/g, (_m, f: string) => `TICKETD_BACKEND_SSL_${f.toUpperCase()}`)}`,
      });
    return given;
  });

/** Every setting but the TLS defaults, which `tls` gives (URLs fill in from them). */
export const settingsSchema = (tls: TlsDefaults) =>
  z.object({
    backends: backendList(SETTING_NAMES.backends, true, tls),
    adminBackends: backendList(SETTING_NAMES.adminBackends, false, tls),
    port: integer(SETTING_NAMES.port, 0, 65535)
      .optional()
      .transform((v) => v ?? DEFAULT_PORT),
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
          ctx.addIssue({
            code: 'custom',
            message: `TICKETD_RATE_LIMIT must be a positive number of requests per second; got ${got(value)}`,
          });
          return z.NEVER;
        }
        return n;
      }),
    maxCount: integer(SETTING_NAMES.maxCount, 1, MAX_MAX_COUNT)
      .optional()
      .transform((v) => v ?? DEFAULT_MAX_COUNT),
    logLevel: z
      .string()
      .optional()
      .transform((value, ctx) => {
        if (value === undefined || value === '') return 'info';
        if (!(LOG_LEVELS as readonly string[]).includes(value)) {
          ctx.addIssue({
            code: 'custom',
            message: `TICKETD_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got ${got(value)}`,
          });
          return z.NEVER;
        }
        return value as LogLevel;
      }),
    workers: integer(SETTING_NAMES.workers, 1, MAX_WORKERS)
      .optional()
      .transform((v) => v ?? 1),
    allowUnsafeDurability: z
      .boolean()
      .optional()
      .transform((v) => v ?? false),
    onRegression: policy(SETTING_NAMES.onRegression, ['advance', 'quarantine'] as const),
    claims: policy(SETTING_NAMES.claims, ['preferred', 'required'] as const),
    advertiseHost: z
      .string()
      .optional()
      .transform((value, ctx) => {
        // Unset: config.ts picks the listening address, or loopback (advertiseDefault).
        if (value === undefined || value === '') return undefined;
        if (!/^[A-Za-z0-9.-]{1,253}$|^\[[0-9A-Fa-f:.]+\]$/.test(value)) {
          ctx.addIssue({
            code: 'custom',
            message: `TICKETD_ADVERTISE_HOST must be a host name or address other front ends reach this one at (an IPv6 address in brackets); got ${got(value)}`,
          });
          return z.NEVER;
        }
        return value;
      }),
    usageFlushMs: integer(SETTING_NAMES.usageFlushMs, MIN_USAGE_FLUSH_MS, MAX_USAGE_FLUSH_MS)
      .optional()
      .transform((v) => v ?? DEFAULT_USAGE_FLUSH_MS),
    peerPort: integer(SETTING_NAMES.peerPort, 0, 65535)
      .optional()
      .transform((v) => v ?? 0),
    host: z
      .string()
      .optional()
      .refine((value) => value === undefined || isIP(value) !== 0 || /^[A-Za-z0-9.-]{1,253}$/.test(value), {
        error:
          "TICKETD_HOST must be an address or host name to listen on (127.0.0.1, ::1, 0.0.0.0, a local interface's address)",
      }),
    runsOutWarningDays: z
      .union([z.number(), z.string()])
      .optional()
      .transform((value, ctx) => {
        if (value === undefined || value === '') return DEFAULT_RUNS_OUT_WARNING_DAYS;
        const n = typeof value === 'number' ? value : /^[0-9]+(\.[0-9]+)?$/.test(value) ? Number(value) : NaN;
        if (!(n > 0 && n <= MAX_RUNS_OUT_WARNING_DAYS)) {
          ctx.addIssue({
            code: 'custom',
            message: `${SETTING_NAMES.runsOutWarningDays} must be a number of days above 0, at most ${MAX_RUNS_OUT_WARNING_DAYS}; got ${got(value)}`,
          });
          return z.NEVER;
        }
        return n;
      }),
    snowflakeEpoch: z
      .string()
      .optional()
      .transform((value, ctx) => {
        if (value === undefined || value === '') return DEFAULT_SNOWFLAKE_EPOCH_MS;
        const ms = /^[0-9]+$/.test(value) ? Number(value) : /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : NaN;
        if (!Number.isSafeInteger(ms)) {
          ctx.addIssue({
            code: 'custom',
            message: `${SETTING_NAMES.snowflakeEpoch} must be the Snowflake clients' epoch as an ISO 8601 date (2024-01-01T00:00:00Z) or milliseconds since 1970; got ${got(value)}`,
          });
          return z.NEVER;
        }
        return ms;
      }),
    snowflakeTimeBits: integer(SETTING_NAMES.snowflakeTimeBits, 1, MAX_TIME_BITS).optional(),
    peerSecret: z
      .string()
      .optional()
      .refine((value) => value === undefined || value.length >= MIN_PEER_SECRET_CHARS, {
        error: `TICKETD_PEER_SECRET must be at least 16 characters (the same on every front end of the fleet)`,
      }),
  });
