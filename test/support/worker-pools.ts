/** HTTP helpers for the worker-pool routes. */
import { TEST_ADMIN_TOKEN } from './ticketd.js';

/** A JSON answer: status, body and headers. */
export interface Answered {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers: Headers;
}

/** POSTs (or PUTs) a JSON body; `admin` adds the admin token. */
export async function send(
  url: string,
  body: object | undefined,
  options: { method?: string; admin?: boolean; token?: string } = {},
): Promise<Answered> {
  const token = options.admin === true ? TEST_ADMIN_TOKEN : options.token;
  const res = await fetch(url, {
    method: options.method ?? 'POST',
    headers: { 'content-type': 'application/json', ...(token !== undefined && { authorization: `Bearer ${token}` }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
    headers: res.headers,
  };
}

/** Creates a pool as admin. */
export function putPool(base: string, name: string, settings: object): Promise<Answered> {
  return send(`${base}/v1/worker-pools/${name}`, settings, { method: 'PUT', admin: true });
}

/** Takes a lease. */
export function takeLease(base: string, pool: string, holder?: string): Promise<Answered> {
  return send(`${base}/v1/worker-pools/${pool}/leases`, holder === undefined ? undefined : { holder });
}

/** A pool name of this run's own (the shared pair outlives a test file). */
export function poolName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}${Math.floor(Math.random() * 1000)}`;
}
