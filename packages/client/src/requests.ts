/** The client's requests to ticketd: each URL in turn, JSON answers, headers and timeouts. */
import { LeaseFailedError } from './errors.js';

/** Per-request timeout when the options give none. */
const DEFAULT_TIMEOUT_MS = 2000;

/** What one URL answered: a value, or why not and whether another URL would answer the same. */
export type Attempt<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string; readonly final: boolean; readonly code?: string | undefined };

/**
 * Asks the URLs in turn from `start`, each once, until one answers: a final refusal stops, a 5xx or
 * a network error moves on. Throws LeaseFailedError with every URL's reason, after `failure`.
 */
export async function askInTurn<T>(urls: readonly string[], start: number, failure: string, ask: (url: string) => Promise<Attempt<T>>): Promise<{ value: T; index: number }> {
  const errors: string[] = [];
  const codes: string[] = [];
  for (let attempt = 0; attempt < urls.length; attempt++) {
    const index = (start + attempt) % urls.length;
    const url = urls[index]!;
    try {
      const answer = await ask(url);
      if (answer.ok) return { value: answer.value, index };
      errors.push(`${url}: ${answer.error}`);
      if (answer.code !== undefined) codes.push(answer.code);
      if (answer.final) break;
    } catch (error) {
      errors.push(`${url}: ${networkReason(error)}`);
    }
  }
  throw new LeaseFailedError(`${failure}: ${errors.join('; ')}`, { codes });
}

/** Hints for the network errors a newcomer meets first, by Node's error code. */
const NETWORK_HINTS: Readonly<Record<string, string>> = {
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be resolved now',
  ECONNREFUSED: 'nothing listens there: is ticketd running on that port?',
  ECONNRESET: 'the connection was closed while asking',
};

/** Why a request got no answer, with its cause (fetch's own message is only "fetch failed"). */
export function networkReason(error: unknown): string {
  // Read by shape, not instanceof: fetch's errors may come from another realm (a VM context, a worker).
  const { name, message, cause } = (typeof error === 'object' && error !== null ? error : {}) as { name?: unknown; message?: unknown; cause?: { message?: unknown; code?: unknown } };
  if (typeof message !== 'string') return String(error);
  if (name === 'TimeoutError') return 'no answer in time (timeoutMs)';
  if (typeof cause?.message !== 'string') return message;
  const hint = typeof cause.code === 'string' ? NETWORK_HINTS[cause.code] : undefined;
  return `${message}: ${cause.message}${hint === undefined ? '' : ` (${hint})`}`;
}

/** The JSON body of a 200 that `complete` accepts; otherwise the status, the problem's title and its detail. */
export async function getJson<T>(url: string, init: RequestInit, complete: (body: Partial<T>) => boolean = () => true): Promise<Attempt<T>> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: (Partial<T> & { title?: unknown; detail?: unknown; code?: unknown }) | undefined;
  try {
    body = JSON.parse(text) as Partial<T> & { title?: unknown; detail?: unknown; code?: unknown };
  } catch {
    body = undefined;
  }
  if (res.status === 200 && body !== undefined && complete(body)) return { ok: true, value: body as T };
  const title = typeof body?.title === 'string' ? body.title : res.statusText;
  const detail = typeof body?.detail === 'string' ? body.detail : body === undefined ? `not JSON: ${JSON.stringify(text.slice(0, 80))}` : '';
  // A 4xx (unknown sequence, bad name, exhausted, no token) is the same everywhere: do not fail over.
  const code = typeof body?.code === 'string' ? body.code : undefined;
  return { ok: false, error: `${res.status} ${title}${detail === '' ? '' : `: ${detail}`}`, final: res.status < 500, code };
}

/** Headers and timeout of every request a client makes. */
export function requestInit(options: { readonly token?: string | undefined; readonly timeoutMs?: number | undefined }, method = 'GET'): RequestInit {
  const headers: Record<string, string> = options.token === undefined ? {} : { authorization: `Bearer ${options.token}` };
  return { method, headers, signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS) };
}
