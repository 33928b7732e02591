/**
 * Claims on the peers: the I/O behind the lane's decisive check (core/lane.ts, step 4). A chunk's
 * tickets are claimed on every reachable peer at once, in one statement each; core/claims.ts
 * judges the replies and the lane's step decides from them. Claims are pruned in the background, leaving a floor behind.
 */
import type { Claim, TicketBackend } from '../backend/ticket-backend.js';
import { judgeReplies, type ClaimsPolicy, type ClassClaims, type PeerReply } from '../core/claims.js';
import type { Step } from '../core/lane.js';
import type { SequenceSettings } from '../core/sequence.js';
import type { Stripe } from '../core/stripes.js';
import { TicketClaimedBeforeError } from '../core/errors.js';
import type { Logger } from '../logger.js';
import { errorText } from '../util/error-text.js';
import { settleWithin } from '../util/settle-within.js';
import type { BackendHealth } from './backend-health.js';
import type { BackendSlot } from './backend-slot.js';
import type { AllocatorEvents } from './events.js';

/**
 * Claims kept per sequence and residue class on each peer; older ones are pruned to a floor. At a
 * block size of 10,000 that is the last billion IDs of each backend, ~20 MB of rows per class and
 * peer. A regression deeper than that meets the floor instead of a claim: refused just the same.
 */
export const DEFAULT_CLAIMS_KEPT = 100_000;
/** A process prunes a peer's class after writing this many claims there (a tenth of what is kept). */
export const PRUNE_EVERY_FRACTION = 10;

/** What one peer replied, and the error behind a duplicate or a failure. */
export interface PeerReplyOf<P> {
  readonly peer: P;
  readonly reply: PeerReply;
  readonly error?: unknown;
}

/**
 * Claims the tickets on every peer at once and waits for all of them, each at most `waitMs` (a new
 * connection to a hung peer would otherwise cost its connect timeout too). Returns each peer's
 * reply for core/claims.ts's judgeReplies: the floors read after an insert, a duplicate key, or a
 * failure (an error or no answer in time). A claim that lands after its peer was given up on is
 * only an extra claim: it can refuse a later repeat, never serve one.
 */
export async function claimOnPeers<P extends { backend: TicketBackend }>(
  peers: readonly P[],
  claim: Claim,
  waitMs: number,
): Promise<PeerReplyOf<P>[]> {
  return Promise.all(
    peers.map((peer) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, fail) => {
        timer = setTimeout(
          () => fail(new Error(`backend ${peer.backend.label} did not answer a claim within ${waitMs} ms`)),
          waitMs,
        );
      });
      return Promise.race([peer.backend.claimTickets(claim), late])
        .then(
          (floors): PeerReplyOf<P> => ({ peer, reply: { kind: 'inserted', floors } }),
          (error: unknown): PeerReplyOf<P> =>
            error instanceof TicketClaimedBeforeError
              ? { peer, reply: { kind: 'duplicate', message: error.message }, error }
              : { peer, reply: { kind: 'failed' }, error },
        )
        .finally(() => clearTimeout(timer));
    }),
  );
}

/**
 * Reads the claim state of a sequence from the backends: from all that answer, or from those that
 * answer within waitMs when it is given. Returns the classes and how many backends answered.
 */
export async function readClaimsEverywhere(
  backends: readonly TicketBackend[],
  sequence: string,
  waitMs?: number,
): Promise<{ classes: ClassClaims[]; answered: number }> {
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
        this.#logger.warn({ backend: peer.label, sequence, err: errorText(error) }, 'pruning claims failed');
      })
      .finally(() => this.#running.delete(run));
    this.#running.add(run);
  }

  /** Waits for prunes in flight (before the pools close). */
  async drain(): Promise<void> {
    await Promise.all([...this.#running]);
  }
}

/** What the claimer needs of the allocator. */
export interface ClaimerContext {
  readonly slots: readonly BackendSlot[];
  readonly health: BackendHealth;
  readonly events: AllocatorEvents;
  readonly logger: Logger;
  readonly policy: ClaimsPolicy;
  /** Longest wait for one peer's answer. */
  readonly waitMs: number;
  /** Claims kept per sequence, class and peer. */
  readonly keep: number;
}

/** Claims chunks of tickets on the peers and feeds the answers to the lane, whose step decides. */
export class Claimer {
  readonly #ctx: ClaimerContext;
  readonly #pruner: ClaimPruner;

  constructor(ctx: ClaimerContext) {
    this.#ctx = ctx;
    this.#pruner = new ClaimPruner(ctx.keep, ctx.logger);
  }

  /** False when the policy requires claims and no peer could take one: a REPLACE now would only burn a ticket. */
  canServe(slot: BackendSlot, sequence: string): boolean {
    if (this.#ctx.slots.some((s) => s !== slot && s.closed)) return true;
    const result = slot.apply(sequence, { kind: 'no-peer', policy: this.#ctx.policy });
    this.#report(slot, sequence, result, () => 'no peer is up');
    return !result.stop;
  }

  /**
   * Claims the tickets on every reachable peer (the decisive check) and applies the answers to the
   * lane: its step returns the blocks that may be served, or the refusal.
   */
  async claim(
    slot: BackendSlot,
    settings: SequenceSettings,
    stripe: Stripe,
    tickets: readonly bigint[],
  ): Promise<Step> {
    const { label } = slot;
    const sequence = settings.name;
    const peers = this.#ctx.slots.filter((s) => s !== slot && s.closed);
    const replies = await claimOnPeers(
      peers,
      { sequence, stripe, tickets, source: slot.identity ?? label },
      this.#ctx.waitMs,
    );
    const { answers, refusal } = judgeReplies(
      { sequence, tickets, stripe },
      replies.map((r) => ({ peer: r.peer.label, reply: r.reply })),
    );
    answers.forEach((answer, i) => {
      const { peer, error } = replies[i]!;
      if (answer === 'claimed') {
        this.#ctx.health.recordSuccess(peer);
        this.#pruner.note(peer.backend, sequence, stripe, tickets.length);
      } else if (answer === 'failed') {
        this.#ctx.health.recordFailure(peer, error);
      }
    });
    const result = slot.apply(sequence, {
      kind: 'claim-answers',
      tickets,
      answers,
      refusedBecause: refusal?.reason,
      policy: this.#ctx.policy,
      settings,
    });
    if (refusal !== undefined && result.notes.some((n) => n.kind === 'claimed-before'))
      this.#ctx.events.claimRefused(label, sequence, refusal.cause);
    this.#report(slot, sequence, result, () =>
      peers.length === 0
        ? 'no peer is up'
        : `no peer took the claim (${replies.map((r) => `${r.peer.label}: ${errorText(r.error)}`).join('; ')})`,
    );
    return result;
  }

  /** Metrics and one log line per episode of tickets without a claim; `why` is worded only for that line. */
  #report(slot: BackendSlot, sequence: string, result: Step, why: () => string): void {
    const { label } = slot;
    for (const note of result.notes) {
      if (note.kind === 'claimed-again')
        this.#ctx.logger.info(
          { backend: label, sequence, unclaimedEpisode: 'end' },
          'tickets are claimed on a peer again',
        );
      if (note.kind !== 'unclaimed') continue;
      if (note.count > 0) this.#ctx.events.unclaimed(label, sequence, note.count);
      if (note.started) {
        this.#ctx.logger.warn(
          { backend: label, sequence, claims: this.#ctx.policy, served: note.served, unclaimedEpisode: 'start' },
          note.served
            ? `serving tickets without a claim on the process marks alone: ${why()}`
            : `refusing tickets without a claim (TICKETD_CLAIMS=required): ${why()}`,
        );
      }
    }
  }

  /** Waits for prunes in flight (before the pools close). */
  drain(): Promise<void> {
    return this.#pruner.drain();
  }
}
