/**
 * What `ticketd dev` keeps in its data folder between runs, so that what it printed stays true
 * after a restart: the servers' ports, the admin token it made up and the demo's client token.
 * The file holds tokens: it is written readable by its owner only.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { portIsFree } from './local-mysql.js';

/** The state file's name inside the data folder. */
export const DEV_STATE_FILE = 'ticketd-dev.json';

/** What a run used; the next run starts from it. */
export interface DevState {
  /** Port of each backend by name (`a`, `b`). */
  readonly ports: Readonly<Record<string, number>>;
  /** The admin token `dev` made up (one from TICKETD_ADMIN_TOKEN is never stored). */
  readonly adminToken: string;
  /** The client token of the demo's opaque sequence. */
  readonly clientToken: string;
}

/** A new random token: 24 characters, URL-safe. */
function newToken(): string {
  return randomBytes(18).toString('base64url');
}

/** The state of the last run in `dir`, or a new one (fresh tokens, no ports) when there is none or it cannot be read. */
export function readDevState(dir: string): DevState {
  try {
    const parsed = JSON.parse(readFileSync(join(dir, DEV_STATE_FILE), 'utf8')) as Partial<DevState>;
    const ports = Object.fromEntries(
      Object.entries(parsed.ports ?? {}).filter(([, p]) => Number.isInteger(p) && p > 0 && p < 65536),
    );
    return {
      ports,
      adminToken: isToken(parsed.adminToken) ? parsed.adminToken : newToken(),
      clientToken: isToken(parsed.clientToken) ? parsed.clientToken : newToken(),
    };
  } catch {
    return { ports: {}, adminToken: newToken(), clientToken: newToken() };
  }
}

/** Stores the state for the next run. */
export function writeDevState(dir: string, state: DevState): void {
  writeFileSync(join(dir, DEV_STATE_FILE), `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

/** The stored port when it is still free on 127.0.0.1, else undefined (the launcher then picks one). */
export async function portIfFree(port: number | undefined): Promise<number | undefined> {
  return port !== undefined && (await portIsFree(port, '127.0.0.1')) ? port : undefined;
}

function isToken(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{16,}$/.test(value);
}
