/**
 * TLS to a backend, in the mysql client's words: `ssl-mode`, `ssl-ca`, `ssl-cert`, `ssl-key` as URL
 * query parameters (or TICKETD_BACKEND_SSL_* defaults), or the `ssl={json}` form that PlanetScale's
 * and TiDB's guides print, handed to mysql2 as its `ssl` option. Files are read when the pools are
 * made and again on a reload (SIGHUP), never per connection.
 */
import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { readTextFile } from '../util/read-file.js';

/** What each mode verifies, as the mysql client has them. */
export const SSL_MODES = ['DISABLED', 'PREFERRED', 'REQUIRED', 'VERIFY_CA', 'VERIFY_IDENTITY'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** The mode when neither the URL nor TICKETD_BACKEND_SSL_MODE names one: the mysql client's default. */
export const DEFAULT_SSL_MODE: SslMode = 'PREFERRED';

/** The parameters that name PEM files, and the field of mysql2's `ssl` each fills. */
const FILE_PARAMETERS = [
  ['ssl-ca', 'ca'],
  ['ssl-cert', 'cert'],
  ['ssl-key', 'key'],
] as const;

/** The URL query parameters a backend URL may carry (`name` is the backend's, read by backend-address.ts). */
export const BACKEND_URL_PARAMETERS = ['ssl-mode', 'ssl-ca', 'ssl-cert', 'ssl-key', 'ssl', 'name'] as const;

/** A backend's TLS settings: the mode, and file paths (or mysql2's own object, from `ssl={json}`). */
export interface BackendTls {
  readonly mode: SslMode;
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  /** `ssl={…}`: mysql2's ssl option as given. */
  readonly json?: Readonly<Record<string, unknown>>;
}

/** TICKETD_BACKEND_SSL_*: defaults for every backend whose URL does not say otherwise. */
export interface TlsDefaults {
  readonly mode?: string | undefined;
  readonly ca?: string | undefined;
  readonly cert?: string | undefined;
  readonly key?: string | undefined;
}

/** mysql2's `ssl` option: PEM material and what to verify. */
export interface MysqlSsl {
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized: boolean;
  verifyIdentity: boolean;
  [option: string]: unknown;
}

/** A backend's TLS settings from its URL's query and the defaults; a problem as a string naming the parameter. */
export function parseBackendTls(query: URLSearchParams, defaults: TlsDefaults = {}): BackendTls | string {
  const unknown = [...query.keys()].filter((k) => !(BACKEND_URL_PARAMETERS as readonly string[]).includes(k));
  if (unknown.length > 0)
    return `unknown parameter ${unknown.map((k) => JSON.stringify(k)).join(', ')}; allowed: ${BACKEND_URL_PARAMETERS.join(', ')}`;
  const repeated = [...query.keys()].filter((k, i, all) => all.indexOf(k) !== i);
  if (repeated.length > 0) return `parameter ${repeated[0]} is given more than once`;
  const json = query.get('ssl');
  if (json !== null) {
    if (query.has('ssl-mode') || FILE_PARAMETERS.some(([name]) => query.has(name)))
      return 'ssl={…} and ssl-mode/ssl-ca/ssl-cert/ssl-key cannot be combined; use one form';
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      return `ssl must be a JSON object such as ssl={"rejectUnauthorized":true}; got ${JSON.stringify(json.slice(0, 60))}`;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return `ssl must be a JSON object such as ssl={"rejectUnauthorized":true}; got ${JSON.stringify(json.slice(0, 60))}`;
    const object = parsed as Record<string, unknown>;
    return Object.freeze({
      mode:
        object.rejectUnauthorized === false
          ? 'REQUIRED'
          : object.verifyIdentity === true
            ? 'VERIFY_IDENTITY'
            : 'VERIFY_CA',
      json: Object.freeze({ ...object }),
    });
  }
  const given = query.get('ssl-mode') ?? defaults.mode ?? DEFAULT_SSL_MODE;
  const mode = SSL_MODES.find((m) => m === given.toUpperCase());
  if (mode === undefined)
    return `ssl-mode must be one of ${SSL_MODES.join(', ')} (any case); got ${JSON.stringify(given.slice(0, 40))}`;
  const files: Record<string, string> = {};
  for (const [name, field] of FILE_PARAMETERS) {
    const path = query.get(name) ?? defaults[field];
    if (path !== undefined && path !== '') files[field] = path;
  }
  if ((files.cert === undefined) !== (files.key === undefined))
    return 'ssl-cert and ssl-key go together: a client certificate needs its key';
  if (mode === 'DISABLED' && Object.keys(files).length > 0)
    return 'ssl-mode=DISABLED with ssl-ca, ssl-cert or ssl-key: choose a mode that uses them';
  const tls: BackendTls = Object.freeze({ mode, ...files });
  try {
    mysqlSsl(tls);
  } catch (error) {
    return (error as Error).message;
  }
  return tls;
}

/** mysql2's `ssl` option for the settings, reading their files now; undefined for plaintext. Throws naming an unreadable file. */
export function mysqlSsl(tls: BackendTls): MysqlSsl | undefined {
  if (tls.json !== undefined)
    return {
      ...tls.json,
      rejectUnauthorized: tls.json.rejectUnauthorized !== false,
      verifyIdentity: tls.json.verifyIdentity === true,
    };
  if (tls.mode === 'DISABLED') return undefined;
  // Without ssl-ca, Node's own store (and NODE_EXTRA_CA_CERTS) is used: a public-CA host needs nothing more.
  const ssl: MysqlSsl = {
    rejectUnauthorized: tls.mode === 'VERIFY_CA' || tls.mode === 'VERIFY_IDENTITY',
    verifyIdentity: tls.mode === 'VERIFY_IDENTITY',
  };
  for (const [name, field] of FILE_PARAMETERS) {
    const path = tls[field];
    if (path === undefined) continue;
    try {
      ssl[field] = readTextFile(path);
    } catch (error) {
      throw new Error(`${name}=${(error as Error).message}`, { cause: error });
    }
  }
  // Parsed here, so that a file that is not PEM (or a key that does not fit its certificate) is
  // refused when it is read, not at every connection after it.
  if (ssl.ca !== undefined || ssl.cert !== undefined) {
    try {
      // createSecureContext skips a CA it cannot parse; X509Certificate does not.
      if (ssl.ca !== undefined) new X509Certificate(ssl.ca);
      createSecureContext({ ca: ssl.ca, cert: ssl.cert, key: ssl.key });
    } catch (error) {
      throw new Error(
        `${describeTls(tls)}: the files do not hold a usable certificate and key (${(error as Error).message})`,
        { cause: error },
      );
    }
  }
  return ssl;
}

/** True when a handshake failed only because the server offers no TLS, and the mode allows plaintext then (PREFERRED). */
export function plaintextAllowed(error: unknown, tls: BackendTls): boolean {
  return (
    tls.mode === 'PREFERRED' &&
    tls.json === undefined &&
    (error as { code?: unknown } | null)?.code === 'HANDSHAKE_NO_SSL_SUPPORT'
  );
}

/** The settings in words for messages: the mode and the files it uses. */
export function describeTls(tls: BackendTls): string {
  if (tls.json !== undefined) return `ssl=${JSON.stringify(tls.json)}`;
  return [
    `ssl-mode=${tls.mode}`,
    ...FILE_PARAMETERS.flatMap(([name, field]) => (tls[field] === undefined ? [] : [`${name}=${tls[field]}`])),
  ].join(' ');
}
