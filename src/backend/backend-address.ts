/** Where a backend lives, parsed from a `mysql://user:pass@host:port/db[?ssl-mode=…]` URL. */
import { parseBackendTls, type BackendTls, type TlsDefaults } from './backend-tls.js';

/** A parsed backend URL. `password` is non-enumerable so it never reaches a log or JSON. */
export interface BackendAddress {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly database: string;
  /** `mysql://host:port/db`: safe to log, shown to the admin only. */
  readonly label: string;
  /**
   * What clients without the admin token call it: the URL's `name` parameter, else its letter in
   * TICKETD_BACKENDS (A, B, …). Undefined only for addresses made by hand (tests): the letter then.
   */
  readonly name?: string;
  /** TLS to it (backend-tls.ts): from the URL's query, else TICKETD_BACKEND_SSL_*. */
  readonly tls: BackendTls;
}

const DEFAULT_MYSQL_PORT = 3306;
const DATABASE_NAME_PATTERN = /^[A-Za-z0-9_$]{1,64}$/;
/** A backend's `name` parameter: lower case, so that it never reads as one of the default letters. */
export const BACKEND_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;

/**
 * Parses one backend URL, the `index`-th of its list (which gives the letter it is named by when the
 * URL has no `name`); returns the problem as a string instead of throwing.
 */
export function parseBackendUrl(text: string, tlsDefaults: TlsDefaults = {}, index?: number): BackendAddress | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${JSON.stringify(redact(text))} is not a URL (expected mysql://user:pass@host:port/db)`;
  }
  if (url.protocol !== 'mysql:') {
    return `${redact(text)} has scheme ${url.protocol.replace(':', '')}, expected mysql`;
  }
  if (url.hostname === '') return `${redact(text)} has no host`;
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!DATABASE_NAME_PATTERN.test(database)) {
    return `${redact(text)} must name a database (letters, digits, _ or $) after the host, as in mysql://host:3306/ticketd`;
  }
  // Never ignored: a parameter this version does not know would be a setting silently dropped.
  const tls = parseBackendTls(url.searchParams, tlsDefaults);
  if (typeof tls === 'string') return `${redact(text)}: ${tls}`;
  const name = url.searchParams.get('name') ?? (index === undefined ? undefined : backendLetter(index));
  if (url.searchParams.has('name') && !BACKEND_NAME_PATTERN.test(name ?? ''))
    return `${redact(text)}: name must match ${BACKEND_NAME_PATTERN.source} (it is shown to every client); got ${JSON.stringify((name ?? '').slice(0, 40))}`;
  const port = url.port === '' ? DEFAULT_MYSQL_PORT : Number(url.port);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const address = {
    host,
    port,
    user: decodeURIComponent(url.username) || 'root',
    database,
    label: `mysql://${url.host}/${database}`,
    ...(name !== undefined && { name }),
    tls,
  };
  Object.defineProperty(address, 'password', {
    value: decodeURIComponent(url.password),
    enumerable: false,
  });
  return Object.freeze(address) as BackendAddress;
}

/** The URL with its password replaced by ***, for messages and printed commands. */
export function redact(text: string): string {
  return text.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

/** The backend's URL with its account and the password as ***, for commands printed to be run again. */
export function displayUrl(address: BackendAddress): string {
  return `mysql://${encodeURIComponent(address.user)}${address.password === '' ? '' : ':***'}@${address.label.slice('mysql://'.length)}`;
}

/** The name clients without the admin token know the backend at place `index` by: its `name`, else its letter. */
export function backendName(address: Pick<BackendAddress, 'name'>, index: number): string {
  return address.name ?? backendLetter(index);
}

/** A backend's letter by its place in TICKETD_BACKENDS, as `ticketd dev` and the status page name them: A is the first. */
export function backendLetter(index: number): string {
  return index < 26 ? String.fromCharCode(65 + index) : `#${index + 1}`;
}

/** The place in TICKETD_BACKENDS a letter names (`A` or `a` is 0), or undefined for anything else. */
export function backendIndexOf(letter: string): number | undefined {
  return /^[A-Z]$/i.test(letter) ? letter.toUpperCase().charCodeAt(0) - 65 : undefined;
}
