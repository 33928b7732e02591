/**
 * Draining a listener on shutdown (SIGTERM): it stops accepting, lets the requests in flight finish,
 * and ends keep-alive connections as they go idle. Every answer from the drain's start on says
 * `Connection: close`, so a client does not send its next request on a connection about to be closed
 * under it (a reset it would have to read as a failure), but opens one to another front end instead.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** How often a drain ends keep-alive connections that have gone idle. */
const IDLE_SWEEP_MS = 50;

/** The answers in flight on a listener, and whether it is draining. */
interface Answers {
  readonly open: Set<ServerResponse>;
  closing: boolean;
}

const listeners = new WeakMap<Server, Answers>();

/** Keeps track of the answers in flight on `server`, for drain(). Call once, before it serves. */
export function trackAnswers(server: Server): void {
  const answers: Answers = { open: new Set(), closing: false };
  listeners.set(server, answers);
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    if (answers.closing) {
      res.shouldKeepAlive = false;
      return;
    }
    answers.open.add(res);
    res.once('close', () => answers.open.delete(res));
  });
}

/** Stops accepting, lets requests in flight finish (their answers closing their connections), and ends idle connections; all of them after `graceMs`. */
export async function drain(server: Server, graceMs: number): Promise<void> {
  const answers = listeners.get(server);
  if (answers !== undefined) {
    answers.closing = true;
    for (const res of answers.open) if (!res.headersSent) res.shouldKeepAlive = false;
  }
  const closed = new Promise<void>((done) => server.close(() => done()));
  const idle = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
  const force = setTimeout(() => server.closeAllConnections(), graceMs);
  server.closeIdleConnections();
  await closed;
  clearInterval(idle);
  clearTimeout(force);
}
