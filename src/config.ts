/** Configuration: validated once at start, all problems reported together, then frozen. */
import { ConfigError } from './errors.js';
import { parseBackendUrl, type BackendAddress } from './backend/backend-address.js';

/** Port the HTTP server listens on when neither --port nor TICKETD_PORT is given. */
export const DEFAULT_PORT = 8080;

/** The settings `serve` runs with. */
export interface Config {
  readonly backends: readonly BackendAddress[];
  readonly port: number;
  /** Bearer token for admin routes; undefined disables them. */
  readonly adminToken: string | undefined;
  /** Demos only: accept backends without crash-safe durability settings. */
  readonly allowUnsafeDurability: boolean;
  /** What to do with a backend whose counter went back: advance it past the mark, or keep it out. */
  readonly onRegression: 'advance' | 'quarantine';
}

/** Values as given: flags win over environment variables. */
export interface ConfigInput {
  readonly backends?: string | undefined;
  readonly port?: string | undefined;
  readonly adminToken?: string | undefined;
  readonly allowUnsafeDurability?: boolean | undefined;
  readonly onRegression?: string | undefined;
}

const MIN_ADMIN_TOKEN_LENGTH = 16;

/** Reads TICKETD_* variables from an environment. */
export function configInputFromEnv(env: Record<string, string | undefined>): ConfigInput {
  return {
    backends: env.TICKETD_BACKENDS,
    port: env.TICKETD_PORT,
    adminToken: env.TICKETD_ADMIN_TOKEN,
    onRegression: env.TICKETD_ON_REGRESSION,
  };
}

/** Merges flags over env and validates; throws one ConfigError naming every bad setting. */
export function loadConfig(env: ConfigInput, flags: ConfigInput = {}): Config {
  const problems: string[] = [];
  const backends = parseBackends(flags.backends ?? env.backends, problems);
  const port = parsePort(flags.port ?? env.port, problems);
  const adminToken = flags.adminToken ?? env.adminToken;
  if (adminToken !== undefined && adminToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    problems.push(`TICKETD_ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters; got ${adminToken.length}`);
  }
  const onRegression = flags.onRegression ?? env.onRegression ?? 'advance';
  if (onRegression !== 'advance' && onRegression !== 'quarantine') {
    problems.push(`TICKETD_ON_REGRESSION must be advance or quarantine; got ${JSON.stringify(onRegression)}`);
  }
  if (problems.length > 0) throw new ConfigError(problems.join('; '));
  return Object.freeze({
    backends: Object.freeze(backends),
    port,
    adminToken,
    allowUnsafeDurability: flags.allowUnsafeDurability ?? false,
    onRegression: onRegression as Config['onRegression'],
  });
}

/** Parses TICKETD_BACKENDS alone (for commands that need nothing else). */
export function parseBackends(text: string | undefined, problems: string[]): BackendAddress[] {
  if (text === undefined || text.trim() === '') {
    problems.push('TICKETD_BACKENDS is not set (comma-separated mysql://user:pass@host:port/db URLs)');
    return [];
  }
  const backends: BackendAddress[] = [];
  for (const part of text.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const parsed = parseBackendUrl(part);
    if (typeof parsed === 'string') problems.push(`TICKETD_BACKENDS: ${parsed}`);
    else backends.push(parsed);
  }
  const labels = backends.map((b) => b.label);
  const repeated = labels.filter((l, i) => labels.indexOf(l) !== i);
  if (repeated.length > 0) problems.push(`TICKETD_BACKENDS lists ${repeated[0]} more than once`);
  return backends;
}

function parsePort(text: string | undefined, problems: string[]): number {
  if (text === undefined || text === '') return DEFAULT_PORT;
  const port = Number(text);
  if (!/^[0-9]+$/.test(text) || port > 65535) {
    problems.push(`TICKETD_PORT must be an integer from 0 to 65535; got ${JSON.stringify(text)}`);
    return DEFAULT_PORT;
  }
  return port;
}
