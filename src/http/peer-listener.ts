/**
 * The request listener of a process's peer port: only `POST /v1/sequences/{name}/strict-range`
 * (a strict sequence's forwarded call), and only for a caller that shows the fleet's peer proof
 * (service/peer-proof.ts). Anyone else gets 403 whatever they ask, so the port tells a stranger
 * nothing of the API behind it.
 */
import { timingSafeEqual } from 'node:crypto';
import { ForbiddenError, RouteNotFoundError } from '../core/errors.js';
import { PEER_PROOF_HEADER, PEER_REFUSED_HEADER } from '../service/peer-proof.js';
import type { RequestListener } from './listener.js';
import { sendProblem } from './problem.js';
import { markPeer } from './request-caller.js';

const STRICT_RANGE = /^\/v1\/sequences\/[^/?]+\/strict-range(?:\?|$)/;

/** Admits peers to the strict-range route of `app`, and no one to anything else. */
export function createPeerListener(app: RequestListener, proof: string): RequestListener {
  const expected = Buffer.from(proof);
  return (req, res) => {
    const given = Buffer.from(String(req.headers[PEER_PROOF_HEADER] ?? ''));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      // Tells a follower this refusal is about it, not about its client's token (strict-forwarder.ts).
      res.setHeader(PEER_REFUSED_HEADER, 'refused');
      sendProblem(
        res,
        new ForbiddenError(
          "this port serves only the other ticketd front ends of the fleet (a strict sequence's forwarded calls); clients use the main port",
        ),
      );
      return;
    }
    if (req.method !== 'POST' || !STRICT_RANGE.test(req.url ?? '')) {
      sendProblem(
        res,
        new RouteNotFoundError(
          `the peer port serves only POST /v1/sequences/{name}/strict-range; not ${req.method} ${(req.url ?? '').split('?')[0]}`,
        ),
      );
      return;
    }
    // The proof checked: the app reads this caller as a peer, whose own caller's token was judged where it asked.
    markPeer(req);
    app(req, res);
  };
}
