/**
 * Forwarded calls from a follower to a strict sequence's leader: `POST …/strict-range` over
 * keep-alive connections, answered `{"first","last"}`, or 421 TICKETD_NOT_LEADER.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { IdRange } from '../core/blocks.js';
import { TicketdError } from '../core/errors.js';
import { ON_BEHALF_OF_HEADER, PEER_PROOF_HEADER, PEER_REFUSED_HEADER } from './peer-proof.js';

/**
 * Forwards a request to the leader on behalf of the caller named `callerName` (this process judged
 * its token; the peer proof is what the leader admits): its range, or 'not-leader' when that process does not lead.
 */
export type ForwardRange = (
  url: string,
  sequence: string,
  count: number,
  callerName: string,
) => Promise<IdRange | 'not-leader'>;

/** How long a forwarded call may take before the follower asks the backends again. */
const FORWARD_TIMEOUT_MS = 1000;

/** A forwarder with its own connection pools, showing the fleet's peer proof (peer-proof.ts) on each call; `close` ends the pools. */
export function strictForwarder(peerProof: string): { readonly forward: ForwardRange; close(): void } {
  const http = new HttpAgent({ keepAlive: true, maxSockets: 16 });
  // An HTTPS leader's certificate is checked against Node's CAs (NODE_EXTRA_CA_CERTS adds one).
  const https = new HttpsAgent({ keepAlive: true, maxSockets: 16 });
  const forward: ForwardRange = (url, sequence, count, callerName) =>
    new Promise<IdRange | 'not-leader'>((resolve, reject) => {
      const target = new URL(`/v1/sequences/${sequence}/strict-range?count=${count}`, url);
      const secure = target.protocol === 'https:';
      const req = (secure ? httpsRequest : httpRequest)(
        target,
        {
          method: 'POST',
          agent: secure ? https : http,
          timeout: FORWARD_TIMEOUT_MS,
          headers: {
            accept: 'application/json',
            [PEER_PROOF_HEADER]: peerProof,
            [ON_BEHALF_OF_HEADER]: callerName,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            try {
              const body = JSON.parse(text) as { first?: string; last?: string; code?: string; detail?: string };
              if (res.headers[PEER_REFUSED_HEADER] !== undefined)
                reject(
                  new Error(
                    `the leader at ${url} refused this front end's peer proof: give every front end the same TICKETD_PEER_SECRET (or the same TICKETD_BACKENDS)`,
                  ),
                );
              else if (res.statusCode === 200 && body.first !== undefined && body.last !== undefined)
                resolve({ first: BigInt(body.first), last: BigInt(body.last) });
              else if (res.statusCode === 421) resolve('not-leader');
              else reject(new ForwardRefusedError(res.statusCode ?? 0, body.code, body.detail ?? text.slice(0, 200)));
            } catch {
              reject(
                new Error(`the leader at ${url} answered ${res.statusCode} with ${JSON.stringify(text.slice(0, 80))}`),
              );
            }
          });
        },
      );
      req.on('timeout', () =>
        req.destroy(new Error(`the leader at ${url} did not answer within ${FORWARD_TIMEOUT_MS} ms`)),
      );
      req.on('error', reject);
      req.end();
    });
  return {
    forward,
    close: () => {
      http.destroy();
      https.destroy();
    },
  };
}

/**
 * The leader refused a forwarded call in ticketd's own terms (a client token, an exhausted or retired
 * sequence): the follower answers with the leader's code, hence its status.
 */
export class ForwardRefusedError extends TicketdError {
  readonly code: string;

  constructor(
    readonly status: number,
    code: string | undefined,
    detail: string,
  ) {
    super(`the leader answered ${status}${code === undefined ? '' : ` ${code}`}: ${detail}`);
    this.code = code ?? 'TICKETD_BACKENDS_UNAVAILABLE';
  }
}
