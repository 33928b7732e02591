/** The client's requests to ticketd: each URL in turn, JSON answers, headers and timeouts. */
import { LeaseFailedError } from './errors.js';

/** Per-request timeout when the options give none. */
const DEFAULT_TIMEOUT_MS = 2000;

/** What one URL answered: a value, or why not and whether another URL would answer the same. */
export type Attempt<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string; readonly final: boolean };

/**
 * Asks the URLs in turn from `start`, each once, until one answers: a final refusal stops, a 5xx or
 * a network error moves on. Throws LeaseFailedError with every URL's reason, after `failure`.
 */
export async function askInTurn<T>(urls: readonly string[], start: number, failure: string, ask: (url: string) => Promise<Attempt<T>>): Promise<{ value: T; index: number }> {
  const errors: string[] = [];
  for (let attempt = 0; attempt < urls.length; attempt++) {
    const index = (start + attempt) % urls.length;
    const url = urls[index]!;
    try {
      const answer = await ask(url);
      if (answer.ok) return { value: answer.value, index };
      errors.push(`${url}: ${answer.error}`);
      if (answer.final) break;
    } catch (error) {
      errors.push(`${url}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  throw new LeaseFailedError(`${failure}: ${errors.join('; ')}`);
}

/** The JSON body of a 200 that `complete` accepts; otherwise the status and the problem's detail. */
export async function getJson<T>(url: string, init: RequestInit, complete: (body: Partial<T>) => boolean = () => true): Promise<Attempt<T>> {
  const res = await fetch(url, init);
  const body = (await res.json()) as Partial<T> & { detail?: string };
  if (res.status === 200 && complete(body)) return { ok: true, value: body as T };
  // A 4xx (unknown sequence, bad name, exhausted, no token) is the same everywhere: do not fail over.
  return { ok: false, error: `${res.status} ${body.detail ?? ''}`.trim(), final: res.status < 500 };
}

/** Headers and timeout of every request a client makes. */
export function requestInit(options: { readonly token?: string | undefined; readonly timeoutMs?: number | undefined }, method = 'GET'): RequestInit {
  const headers: Record<string, string> = options.token === undefined ? {} : { authorization: `Bearer ${options.token}` };
  return { method, headers, signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS) };
}
