/**
 * Claims on the peers: the I/O behind ticket-guard's decisive check. A chunk's tickets are claimed
 * on every reachable peer at once, in one statement each; the guard's `claimVerdict` reads the
 * answers. Claims are pruned in the background, leaving a floor behind.
 */
import type { Claim, ClassClaims, TicketBackend } from '../backend/ticket-backend.js';
import type { Stripe } from '../core/ticket-math.js';
import { TicketClaimedBeforeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { settleWithin } from '../util/settle-within.js';
import type { ClaimAnswer } from './ticket-guard.js';

/**
 * Claims kept per sequence and residue class on each peer; older ones are pruned to a floor. At a
 * block size of 10,000 that is the last billion IDs of each backend, ~20 MB of rows per class and
 * peer. A regression deeper than that meets the floor instead of a claim: refused just the same.
 */
export const DEFAULT_CLAIMS_KEPT = 100_000;
/** A process prunes a peer's class after writing this many claims there (a tenth of what is kept). */
export const PRUNE_EVERY_FRACTION = 10;

/** What one peer answered, and the refusal when it refused. */
export interface PeerAnswer<P> {
  readonly peer: P;
  readonly answer: ClaimAnswer;
  readonly error?: unknown;
}

/**
 * Claims the tickets on every peer at once and waits for all of them, each at most `waitMs` (a new
 * connection to a hung peer would otherwise cost its connect timeout too). A refusal is a
 * `claimed-before`; an error or no answer in time is a `failed` peer. A claim that lands after its
 * peer was given up on is only an extra claim: it can refuse a later repeat, never serve one.
 */
export async function claimOnPeers<P extends { backend: TicketBackend }>(peers: readonly P[], claim: Claim, waitMs: number): Promise<PeerAnswer<P>[]> {
  return Promise.all(
    peers.map((peer) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new Error(`backend ${peer.backend.label} did not answer a claim within ${waitMs} ms`)), waitMs);
      });
      return Promise.race([peer.backend.claimTickets(claim), late])
        .then(
          (): PeerAnswer<P> => ({ peer, answer: 'claimed' }),
          (error: unknown): PeerAnswer<P> => ({ peer, answer: error instanceof TicketClaimedBeforeError ? 'claimed-before' : 'failed', error }),
        )
        .finally(() => clearTimeout(timer));
    }),
  );
}

/**
 * Reads the claim state of a sequence from the backends: from all that answer, or from those that
 * answer within waitMs when it is given. Returns the classes and how many backends answered.
 */
export async function readClaimsEverywhere(backends: readonly TicketBackend[], sequence: string, waitMs?: number): Promise<{ classes: ClassClaims[]; answered: number }> {
  const reads = backends.map((b) => b.readClaims(sequence));
  const answers =
    waitMs === undefined
      ? (await Promise.allSettled(reads)).flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
      : await settleWithin(reads, waitMs);
  return { classes: answers.flat(), answered: answers.length };
}

/** Counts claims written per peer and class, and prunes a class in the background when it is due. */
export class ClaimPruner {
  readonly #keep: number;
  readonly #every: number;
  readonly #logger: Logger;
  readonly #written = new Map<string, number>();
  readonly #running = new Set<Promise<unknown>>();

  constructor(keep: number, logger: Logger) {
    this.#keep = keep;
    this.#every = Math.max(1, Math.floor(keep / PRUNE_EVERY_FRACTION));
    this.#logger = logger;
  }

  /** Notes claims written on a peer; starts a prune of that class when enough have piled up. */
  note(peer: TicketBackend, sequence: string, stripe: Stripe, count: number): void {
    const key = `${peer.label}\u0000${sequence}\u0000${stripe.increment}/${stripe.offset}`;
    const written = (this.#written.get(key) ?? 0) + count;
    if (written < this.#every) {
      this.#written.set(key, written);
      return;
    }
    this.#written.set(key, 0);
    const run = peer
      .pruneClaims(sequence, stripe, this.#keep)
      .then((floor) => {
        if (floor !== undefined) this.#logger.debug({ backend: peer.label, sequence, floor }, 'claims pruned');
      })
      .catch((error: unknown) => {
        // Pruning only bounds the table; a failed one is tried again after the next batch of claims.
        this.#logger.warn({ backend: peer.label, sequence, err: error instanceof Error ? error.message : String(error) }, 'pruning claims failed');
      })
      .finally(() => this.#running.delete(run));
    this.#running.add(run);
  }

  /** Waits for prunes in flight (before the pools close). */
  async drain(): Promise<void> {
    await Promise.all([...this.#running]);
  }
}
