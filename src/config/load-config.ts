/**
 * Configuration: flags over environment variables over an optional JSON config file, validated
 * once with zod at start, every problem reported together in one line, then frozen.
 */
import { isIP } from 'node:net';
import { readFileSync } from 'node:fs';
import { ConfigError } from '../core/errors.js';
import type { BackendAddress } from '../backend/backend-address.js';
import { readSecretFiles } from './secrets.js';
import { errorText } from '../util/error-text.js';
import { flagName, SETTING_NAMES, type Config, type ConfigInput } from './settings.js';
import { settingsSchema, tlsDefaults } from './schema.js';

export {
  configInputFromEnv,
  DEFAULT_MAX_COUNT,
  DEFAULT_PORT,
  MAX_MAX_COUNT,
  MAX_WORKERS,
  MIN_PEER_SECRET_CHARS,
} from './settings.js';
export type { Config, ConfigInput, HttpsFiles } from './settings.js';

/** Reads a JSON config file whose keys are the settings' camelCase names (`backends`, `port`, …). */
export function readConfigFile(path: string): ConfigInput {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`TICKETD_CONFIG: cannot read ${path} as JSON: ${errorText(error)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new ConfigError(`TICKETD_CONFIG: ${path} must hold a JSON object`);
  const unknown = Object.keys(parsed).filter((k) => !(k in SETTING_NAMES));
  if (unknown.length > 0) {
    throw new ConfigError(
      `TICKETD_CONFIG: ${path} has unknown setting(s) ${unknown.join(', ')}; allowed: ${Object.keys(SETTING_NAMES).join(', ')}`,
    );
  }
  return parsed;
}

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
  const defaults = tlsDefaults.safeParse({
    mode: merged.backendSslMode,
    ca: merged.backendSslCa,
    cert: merged.backendSslCert,
    key: merged.backendSslKey,
  });
  if (!defaults.success) problems.push(...defaults.error.issues.map((i) => i.message));
  const parsed = settingsSchema(defaults.success ? defaults.data : {}).safeParse(merged);
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
  const c = parsed.data;
  if (c.adminBackends.length > 0) checkAdminBackends(c.backends, c.adminBackends);
  if ((c.tlsCert === undefined) !== (c.tlsKey === undefined))
    throw new ConfigError(
      'TICKETD_TLS_CERT and TICKETD_TLS_KEY go together: HTTPS needs both the certificate and its key',
    );
  if (c.tlsClientCa !== undefined && c.tlsCert === undefined)
    throw new ConfigError(
      'TICKETD_TLS_CLIENT_CA needs TICKETD_TLS_CERT and TICKETD_TLS_KEY: client certificates are asked for over HTTPS only',
    );
  if (c.peerPort !== 0 && c.workers > 1)
    throw new ConfigError(
      `TICKETD_PEER_PORT=${c.peerPort} cannot be shared by ${c.workers} worker processes: each listens on a port of its own; leave it unset (0) with TICKETD_WORKERS`,
    );
  if (c.advertiseHost !== undefined && c.host === undefined && !isLoopback(c.advertiseHost))
    // Without TICKETD_HOST the peer listeners bind loopback: other hosts could never reach the address advertised.
    throw new ConfigError(
      `TICKETD_ADVERTISE_HOST=${c.advertiseHost} is reached from other hosts, but without TICKETD_HOST the peer listeners bind 127.0.0.1 only: set TICKETD_HOST to the address they reach (or 0.0.0.0)`,
    );
  if (c.claims === 'required' && c.backends.length < 2) {
    // A claim goes to a peer of the backend a ticket came from; one backend has none.
    throw new ConfigError(
      `TICKETD_CLAIMS=required needs at least two backends (claims are kept on a peer); TICKETD_BACKENDS has ${c.backends.length}`,
    );
  }
  return Object.freeze({
    backends: Object.freeze(c.backends),
    adminBackends: Object.freeze(c.adminBackends),
    port: c.port,
    adminTokens: c.adminToken,
    clientTokens: c.clientTokens,
    tls:
      c.tlsCert === undefined || c.tlsKey === undefined
        ? undefined
        : Object.freeze({ cert: c.tlsCert, key: c.tlsKey, clientCa: c.tlsClientCa }),
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
    advertiseHost: c.advertiseHost ?? advertiseDefault(c.host),
    peerPort: c.peerPort,
    host: c.host,
    peerSecret: c.peerSecret,
    usageFlushMs: c.usageFlushMs,
    runsOutWarningSeconds: c.runsOutWarningDays * 86_400,
    snowflakeLayout: Object.freeze({ epochMs: c.snowflakeEpoch, timeBits: c.snowflakeTimeBits }),
  });
}

function checkAdminBackends(backends: readonly BackendAddress[], admin: readonly BackendAddress[]): void {
  const serving = backends.map((b) => b.label).join(',');
  const given = admin.map((b) => b.label).join(',');
  if (serving !== given) {
    throw new ConfigError(
      `TICKETD_ADMIN_BACKENDS must name the same servers as TICKETD_BACKENDS, in the same order, with other accounts; got ${given} for ${serving}`,
    );
  }
}

/** True for a name or address of this host's loopback (127.0.0.0/8, ::1, localhost). */
function isLoopback(host: string): boolean {
  return /^127\.\d+\.\d+\.\d+$/.test(host) || host === 'localhost' || host === '[::1]' || host === '::1';
}

/**
 * Where other front ends reach this one when TICKETD_ADVERTISE_HOST is unset: the address it listens
 * on (its peer listeners bind there), or loopback when it listens on every interface.
 */
function advertiseDefault(host: string | undefined): string {
  if (host === undefined || host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return isIP(host) === 6 ? `[${host}]` : host;
}
