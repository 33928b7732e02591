/** The client's requests to ticketd: each URL in turn, JSON answers, headers and timeouts. */
import { LeaseFailedError } from './errors.js';

/** Per-request timeout when the options give none. */
const DEFAULT_TIMEOUT_MS = 2000;

/** What one URL answered: a value, or why not and whether another URL would answer the same. */
export type Attempt<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: string; readonly final: boolean; readonly code?: string | undefined };

/**
 * Asks the URLs in turn from `start`, each once, until one answers: a final refusal stops, a 5xx or
 * a network error moves on. Throws LeaseFailedError with every URL's reason, after `failure`
 * (retryable unless a URL refused: a 4xx).
 */
export async function askInTurn<T>(
  urls: readonly string[],
  start: number,
  failure: string,
  ask: (url: string) => Promise<Attempt<T>>,
): Promise<{ value: T; index: number }> {
  const errors: string[] = [];
  const codes: string[] = [];
  let retryable = true;
  for (let attempt = 0; attempt < urls.length; attempt++) {
    const index = (start + attempt) % urls.length;
    const url = urls[index]!;
    try {
      const answer = await ask(url);
      if (answer.ok) return { value: answer.value, index };
      errors.push(`${url}: ${answer.error}`);
      if (answer.code !== undefined) codes.push(answer.code);
      retryable = !answer.final;
      if (answer.final) break;
    } catch (error) {
      errors.push(`${url}: ${networkReason(error)}`);
      retryable = true;
    }
  }
  throw new LeaseFailedError(`${failure}: ${errors.join('; ')}`, { codes, retryable });
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
  const { name, message, cause } = (typeof error === 'object' && error !== null ? error : {}) as {
    name?: unknown;
    message?: unknown;
    cause?: { message?: unknown; code?: unknown };
  };
  if (typeof message !== 'string') return String(error);
  if (name === 'TimeoutError') return 'no answer in time (timeoutMs)';
  if (typeof cause?.message !== 'string') return message;
  const hint = typeof cause.code === 'string' ? NETWORK_HINTS[cause.code] : undefined;
  return `${message}: ${cause.message}${hint === undefined ? '' : ` (${hint})`}`;
}

/**
 * PEM material for HTTPS to ticketd: a CA that is not in Node's store, and a client certificate and
 * key when ticketd asks for one (TICKETD_TLS_CLIENT_CA). Without them, https:// URLs use Node's store
 * (and NODE_EXTRA_CA_CERTS).
 */
export interface TlsMaterial {
  readonly ca?: string | Uint8Array | readonly (string | Uint8Array)[];
  readonly cert?: string | Uint8Array;
  readonly key?: string | Uint8Array;
}

/** A request as the client makes it: fetch's init, and the TLS material when the options give any. */
export type TicketdRequest = RequestInit & { readonly tls?: TlsMaterial };

/** The JSON body of a 200 that `complete` accepts; otherwise the status, the problem's title and its detail. */
export async function getJson<T>(
  url: string,
  init: TicketdRequest,
  complete: (body: Partial<T>) => boolean = () => true,
): Promise<Attempt<T>> {
  const res = init.tls === undefined ? await fetch(url, init) : await httpsRequest(url, init, init.tls);
  const text = await res.text();
  let body: (Partial<T> & { title?: unknown; detail?: unknown; code?: unknown }) | undefined;
  try {
    body = JSON.parse(text) as Partial<T> & { title?: unknown; detail?: unknown; code?: unknown };
  } catch {
    body = undefined;
  }
  if (res.status === 200 && body !== undefined && complete(body)) return { ok: true, value: body as T };
  const title = typeof body?.title === 'string' ? body.title : res.statusText;
  const detail =
    typeof body?.detail === 'string'
      ? body.detail
      : body === undefined
        ? `not JSON: ${JSON.stringify(text.slice(0, 80))}`
        : '';
  // A 4xx (unknown sequence, bad name, exhausted, no token) is the same everywhere: do not fail over.
  const code = typeof body?.code === 'string' ? body.code : undefined;
  return {
    ok: false,
    error: `${res.status} ${title}${detail === '' ? '' : `: ${detail}`}`,
    final: res.status < 500,
    code,
  };
}

/** Headers, timeout and TLS material of every request a client makes. */
export function requestInit(
  options: { readonly token?: string | undefined; readonly timeoutMs?: number | undefined } & TlsMaterial,
  method = 'GET',
): TicketdRequest {
  const headers: Record<string, string> =
    options.token === undefined ? {} : { authorization: `Bearer ${options.token}` };
  const tls = options.ca !== undefined || options.cert !== undefined || options.key !== undefined ? options : undefined;
  return {
    method,
    headers,
    signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    ...(tls !== undefined && { tls }),
  };
}

/** One keep-alive agent per client's options: connections (and TLS sessions) are reused, not made per request. */
const agents = new WeakMap<TlsMaterial, unknown>();

/** The answer of one request over node:https, with the few members of fetch's Response the client reads. */
async function httpsRequest(
  url: string,
  init: RequestInit,
  tls: TlsMaterial,
): Promise<{ status: number; statusText: string; text(): Promise<string> }> {
  // Loaded only when TLS material is given: the rest of the client needs nothing beyond fetch.
  const https = await import('node:https');
  let agent = agents.get(tls) as InstanceType<typeof https.Agent> | undefined;
  if (agent === undefined) {
    agent = new https.Agent({
      keepAlive: true,
      ca: tls.ca as string[],
      cert: tls.cert as string,
      key: tls.key as string,
    });
    agents.set(tls, agent);
  }
  const body = typeof init.body === 'string' ? init.body : undefined;
  return new Promise((done, fail) => {
    const req = https.request(
      url,
      {
        method: init.method ?? 'GET',
        headers: {
          ...(init.headers as Record<string, string>),
          ...(body !== undefined && { 'content-length': String(Buffer.byteLength(body)) }),
        },
        agent,
        signal: init.signal ?? undefined,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', fail);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          done({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', text: () => Promise.resolve(text) });
        });
      },
    );
    // Shaped like fetch's failure, so networkReason names the cause (a refused certificate, a refused connection).
    req.on('error', (error) => fail(Object.assign(new TypeError('fetch failed'), { cause: error })));
    req.end(body);
  });
}
