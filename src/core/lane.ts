/**
 * The uniqueness argument, and the one state machine that applies it. A lane is what one process
 * knows of one backend for one sequence; `step` is the only code that decides whether a ticket's
 * block may be served and whether a backend must be checked again. The allocator does the I/O the
 * steps ask for and feeds the answers back as events.
 *
 * ticketd never issues an ID twice because:
 * 1. Blocks: ticket t owns [t·B, t·B + B − 1] within (startAfter, maxId] (blocks.ts); blocks of
 *    different tickets never overlap, so it is enough that no ticket's block is served twice.
 * 2. Stripes: every backend has the same increment and a distinct offset ≤ increment, and a
 *    crash-safe server, checked on every new connection (stripes.ts: judgeConnection). Two backends
 *    then never issue the same ticket while their counters only go forward.
 * 3. Parity and marks: a ticket must lie in its backend's class and above every ticket this lane
 *    accepted or learnt was used (`tickets`; counters.ts: accept). A cheap first filter: other
 *    processes take tickets too, and an idle process's mark is old.
 * 4. Claims, the decisive check: a block is served only after a peer (never the backend it came
 *    from) took its ticket's claim under the unique key (sequence, ticket) (`claim-answers`). A
 *    ticket issued again, by any backend, after any regression, meets that key, or the floor that
 *    pruned claims leave behind (claims.ts), and is refused.
 * 5. With no peer to take the claim, TICKETD_CLAIMS decides: `preferred` serves on the marks alone
 *    and says so, `required` refuses.
 * 6. Checked before use: a lane starts `unchecked` and falls back to it after any failed call, an
 *    idle spell (`mustRecheck`) or a new server behind the address (`stale`). It serves again only
 *    after its peers' claims were read and its counter compared with them (`counter-read`,
 *    `leader-read`, `checked`): a restore or a promoted replica is caught before its first ticket.
 * 7. A counter at or below a used ticket is advanced past every used ticket known, plus a gap
 *    (counters.ts: regressionTarget), or quarantined until an operator releases it. An advance never lowers a
 *    counter; the claims, not the advance, keep IDs unique, so a short advance costs refusals only.
 * 8. A ticket that maps past maxId exhausts the lane: tickets only grow. Only a wider maxId
 *    (core/widening.ts) reopens it, unchecked, so it is checked again before it serves.
 */
import { blockForTicket, firstUsefulTicket, type BlockSettings, type IdRange } from './blocks.js';
import {
  claimVerdict,
  highestUsed,
  mayServeUnclaimed,
  type ClaimAnswer,
  type ClaimsPolicy,
  type ClassClaims,
} from './claims.js';
import {
  accept,
  catchUpTarget,
  isRegressed,
  regressionTarget,
  type Refusal,
  type RegressionPolicy,
} from './counters.js';
import type { Stripe } from './stripes.js';

/** unchecked → serving ⇄ unchecked; any → quarantined → (release) unchecked; serving → exhausted → (widened) unchecked. */
export type LanePhase = 'unchecked' | 'serving' | 'quarantined' | 'exhausted';

/** One backend, one sequence, as this process knows it. */
export interface Lane {
  readonly phase: LanePhase;
  /** Why it is quarantined. */
  readonly quarantine: string | undefined;
  /** The highest ticket accepted from the backend or learnt used in its class; never lowered. */
  readonly mark: bigint | undefined;
  /** The highest ticket accepted from the backend (operators). */
  readonly lastTicket: bigint | undefined;
  /** True while its tickets find no peer to take their claims. */
  readonly unclaimed: boolean;
}

/** A lane nothing is known of yet. */
export const NEW_LANE: Lane = Object.freeze({
  phase: 'unchecked',
  quarantine: undefined,
  mark: undefined,
  lastTicket: undefined,
  unclaimed: false,
});

/** What happened to the lane, as the allocator learnt it. */
export type LaneEvent =
  /** A failed call, an idle spell or another server behind the address. */
  | { readonly kind: 'stale' }
  /** Checking: the peers' claims for the backend's class, and its own next ticket. */
  | {
      readonly kind: 'counter-read';
      readonly next: bigint;
      readonly peers: readonly ClassClaims[];
      readonly stripe: Stripe;
      readonly policy: RegressionPolicy;
    }
  /** Checking: its next ticket (after any advance) and the highest of its peers'. */
  | { readonly kind: 'leader-read'; readonly own: bigint; readonly leader: bigint; readonly stripe: Stripe }
  /** Checking done: every advance it asked for went through. */
  | { readonly kind: 'checked' }
  /** A run of tickets from the backend, in the order fetched. */
  | { readonly kind: 'tickets'; readonly tickets: readonly bigint[]; readonly stripe: Stripe; readonly where: string }
  /** The peers' answers to the claim of accepted tickets; `refusedBecause` is the refusing peer's message. */
  | {
      readonly kind: 'claim-answers';
      readonly tickets: readonly bigint[];
      readonly answers: readonly ClaimAnswer[];
      readonly refusedBecause: string | undefined;
      readonly policy: ClaimsPolicy;
      readonly settings: BlockSettings;
    }
  /** No peer is up to take a claim, before any ticket is fetched. */
  | { readonly kind: 'no-peer'; readonly policy: ClaimsPolicy }
  /** A ticket refused by parity, the mark or a claim. */
  | { readonly kind: 'refused'; readonly refusal: Refusal; readonly policy: RegressionPolicy }
  /** The peers' claims, read afresh after a regression at ticket `seen`. */
  | {
      readonly kind: 'used-read';
      readonly seen: bigint;
      readonly peers: readonly ClassClaims[];
      readonly stripe: Stripe;
    }
  /** The counter reached its column's maximum. */
  | { readonly kind: 'overflow'; readonly ticket: bigint | undefined }
  /** An operator's release: every peer's claims and the backend's next ticket. */
  | {
      readonly kind: 'release-read';
      readonly next: bigint;
      readonly peers: readonly ClassClaims[];
      readonly stripe: Stripe;
    }
  /** The release's advance (if any) went through; `peers` as read for it. */
  | { readonly kind: 'released'; readonly peers: readonly ClassClaims[]; readonly stripe: Stripe }
  /** The sequence's maxId grew: tickets past the old bound may serve. */
  | { readonly kind: 'widened' };

/** I/O a step asks for. */
export type Effect =
  /** Move the counter so its next ticket is ≥ to (never lowers it; the serving account's INSERT and DELETE do it). */
  | {
      readonly kind: 'advance';
      readonly to: bigint;
      readonly why: 'regressed' | 'catch-up' | 'below-start' | 'released';
      /** The counter's next ticket as read (regressed, catch-up, released). */
      readonly from?: bigint;
      /** The highest ticket of its class known used (regressed, released). */
      readonly used?: bigint | undefined;
    }
  /** Read the peers' claims afresh and answer with `used-read`. */
  | { readonly kind: 'read-used'; readonly seen: bigint };

/** What a step did that operators hear of (logs and metrics). */
export type Note =
  | {
      readonly kind: 'regressed';
      readonly ticket: bigint;
      readonly reason: string;
      readonly outcome: 'advanced' | 'quarantined';
    }
  | { readonly kind: 'wrong-class'; readonly ticket: bigint; readonly reason: string }
  | { readonly kind: 'claimed-before'; readonly reason: string }
  | { readonly kind: 'unclaimed'; readonly count: number; readonly served: boolean; readonly started: boolean }
  | { readonly kind: 'claimed-again' }
  | { readonly kind: 'exhausted'; readonly ticket: bigint | undefined };

/** The outcome of one event. */
export interface Step {
  readonly lane: Lane;
  readonly effects: readonly Effect[];
  readonly notes: readonly Note[];
  /** `tickets`: those that passed parity and the mark, to be claimed before their blocks are served. */
  readonly accepted: readonly bigint[];
  /** `claim-answers`: the ranges that may be served now. */
  readonly serve: readonly IdRange[];
  /** `claim-answers`: none of the tickets' blocks may be served (claimed before, or unclaimed and refused). */
  readonly withheld: boolean;
  /** Why a run stopped at a ticket. */
  readonly refusal: Refusal | undefined;
  /** No more tickets from this backend in this refill. */
  readonly stop: boolean;
}

const NOTHING: Omit<Step, 'lane'> = Object.freeze({
  effects: [],
  notes: [],
  accepted: [],
  serve: [],
  withheld: false,
  refusal: undefined,
  stop: false,
});

/** The next state of a lane, what may be served, and the I/O to do next. Pure. */
export function step(lane: Lane, event: LaneEvent): Step {
  switch (event.kind) {
    case 'stale':
      return { ...NOTHING, lane: lane.phase === 'serving' ? { ...lane, phase: 'unchecked' } : lane };
    case 'counter-read':
      return onCounterRead(lane, event);
    case 'leader-read': {
      const target = catchUpTarget(event.own, event.leader, event.stripe);
      return {
        ...NOTHING,
        lane,
        effects: target === undefined ? [] : [{ kind: 'advance', to: target, why: 'catch-up', from: event.own }],
      };
    }
    case 'checked':
      return { ...NOTHING, lane: lane.phase === 'unchecked' ? { ...lane, phase: 'serving' } : lane };
    case 'tickets':
      return onTickets(lane, event);
    case 'claim-answers':
      return onClaimAnswers(lane, event);
    case 'no-peer':
      // Claims are required and no peer can take them: a REPLACE now would only burn a ticket.
      if (mayServeUnclaimed(event.policy)) return { ...NOTHING, lane };
      return {
        ...NOTHING,
        lane: { ...lane, unclaimed: true },
        stop: true,
        withheld: true,
        notes: [{ kind: 'unclaimed', count: 0, served: false, started: !lane.unclaimed }],
      };
    case 'refused':
      return onRefused(lane, event);
    case 'used-read': {
      const used = highestUsed(event.peers, event.stripe);
      const to = regressionTarget([used, lane.mark, event.seen], event.stripe);
      return { ...NOTHING, lane, effects: [{ kind: 'advance', to, why: 'regressed', from: event.seen, used }] };
    }
    case 'overflow':
      return exhaust(lane, event.ticket, []);
    case 'release-read': {
      const used = highestUsed(event.peers, event.stripe);
      const to = regressionTarget([used, lane.mark, event.next], event.stripe);
      const effects: Effect[] = isRegressed(event.next, used)
        ? [{ kind: 'advance', to, why: 'released', from: event.next, used }]
        : [];
      return { ...NOTHING, lane, effects };
    }
    case 'released': {
      const raised = raise(lane, highestUsed(event.peers, event.stripe));
      return {
        ...NOTHING,
        lane: { ...raised, phase: lane.phase === 'exhausted' ? 'exhausted' : 'unchecked', quarantine: undefined },
      };
    }
    case 'widened':
      // Its mark stays: a reopened lane still serves only above every ticket it saw.
      return { ...NOTHING, lane: lane.phase === 'exhausted' ? { ...lane, phase: 'unchecked' } : lane };
  }
}

/** True when a backend idle for longer than `idleMs` must be checked again: the server behind its address may have been replaced. */
export function mustRecheck(lastUsedAt: number, now: number, idleMs: number): boolean {
  return now - lastUsedAt > idleMs;
}

/** True when the backend must be checked (claims read, counter compared) before its next tickets are used. */
export function needsCheck(lane: Lane): boolean {
  return lane.phase === 'unchecked';
}

/** True when the lane may be asked for tickets (checked first if it is unchecked). */
export function usable(lane: Lane): boolean {
  return lane.phase === 'unchecked' || lane.phase === 'serving';
}

function raise(lane: Lane, ticket: bigint | undefined): Lane {
  return ticket !== undefined && (lane.mark === undefined || ticket > lane.mark) ? { ...lane, mark: ticket } : lane;
}

function onCounterRead(lane: Lane, event: Extract<LaneEvent, { kind: 'counter-read' }>): Step {
  const used = highestUsed(event.peers, event.stripe);
  const raised = raise(lane, used);
  if (!isRegressed(event.next, used)) return { ...NOTHING, lane: raised };
  const reason = `counter at ${event.next}, at or below ticket ${used} already used (restored backup or promoted replica?)`;
  if (event.policy === 'quarantine')
    return quarantine(raised, { kind: 'regressed', ticket: event.next, reason, outcome: 'quarantined' }, reason);
  const to = regressionTarget([used, raised.mark, event.next], event.stripe);
  return {
    ...NOTHING,
    lane: raised,
    effects: [{ kind: 'advance', to, why: 'regressed', from: event.next, used }],
    notes: [{ kind: 'regressed', ticket: event.next, reason, outcome: 'advanced' }],
  };
}

function onTickets(lane: Lane, event: Extract<LaneEvent, { kind: 'tickets' }>): Step {
  const { accepted, refused } = accept(event.tickets, event.stripe, lane.mark, event.where);
  const last = accepted[accepted.length - 1];
  const next = last === undefined ? lane : { ...raise(lane, last), lastTicket: last };
  return { ...NOTHING, lane: next, accepted, refusal: refused };
}

function onClaimAnswers(lane: Lane, event: Extract<LaneEvent, { kind: 'claim-answers' }>): Step {
  const verdict = claimVerdict(event.answers);
  if (verdict === 'claimed-before') {
    const reason = event.refusedBecause ?? `a peer holds a claim for one of tickets from ${event.tickets[0]}`;
    return {
      ...NOTHING,
      lane,
      stop: true,
      withheld: true,
      refusal: { ticket: event.tickets[0]!, regressed: true, reason },
      notes: [{ kind: 'claimed-before', reason }],
    };
  }
  if (verdict === 'claimed') {
    const mapped = blocksOf(lane.unclaimed ? { ...lane, unclaimed: false } : lane, event.tickets, event.settings);
    return lane.unclaimed ? { ...mapped, notes: [{ kind: 'claimed-again' }, ...mapped.notes] } : mapped;
  }
  const served = mayServeUnclaimed(event.policy);
  const note: Note = { kind: 'unclaimed', count: event.tickets.length, served, started: !lane.unclaimed };
  const unclaimed = { ...lane, unclaimed: true };
  if (!served) return { ...NOTHING, lane: unclaimed, stop: true, withheld: true, notes: [note] };
  const mapped = blocksOf(unclaimed, event.tickets, event.settings);
  return { ...mapped, notes: [note, ...mapped.notes] };
}

/** The blocks of claimed tickets: exhaustion past maxId, and a counter still below startAfter moved forward. */
function blocksOf(lane: Lane, tickets: readonly bigint[], settings: BlockSettings): Step {
  const serve: IdRange[] = [];
  for (const ticket of tickets) {
    const outcome = blockForTicket(ticket, settings);
    if (outcome.kind === 'exhausted') return exhaust(lane, ticket, serve);
    if (outcome.kind === 'below-start') {
      // A counter behind startAfter (a table created by hand): move it forward rather than burn tickets.
      return {
        ...NOTHING,
        lane,
        serve,
        stop: true,
        effects: [{ kind: 'advance', to: firstUsefulTicket(settings), why: 'below-start' }],
      };
    }
    serve.push(outcome.range);
    // Tickets only grow, so after the block that reaches maxId this backend has nothing left.
    if (outcome.range.last === settings.maxId) return exhaust(lane, ticket, serve);
  }
  return { ...NOTHING, lane, serve };
}

function exhaust(lane: Lane, ticket: bigint | undefined, serve: readonly IdRange[]): Step {
  return {
    ...NOTHING,
    lane: { ...lane, phase: 'exhausted' },
    serve,
    stop: true,
    notes: [{ kind: 'exhausted', ticket }],
  };
}

function onRefused(lane: Lane, event: Extract<LaneEvent, { kind: 'refused' }>): Step {
  const { refusal } = event;
  // A ticket of the wrong residue class cannot be fixed by advancing the counter.
  if (!refusal.regressed)
    return quarantine(lane, { kind: 'wrong-class', ticket: refusal.ticket, reason: refusal.reason }, refusal.reason);
  if (event.policy === 'quarantine')
    return quarantine(
      lane,
      { kind: 'regressed', ticket: refusal.ticket, reason: refusal.reason, outcome: 'quarantined' },
      refusal.reason,
    );
  return {
    ...NOTHING,
    lane,
    effects: [{ kind: 'read-used', seen: refusal.ticket }],
    notes: [{ kind: 'regressed', ticket: refusal.ticket, reason: refusal.reason, outcome: 'advanced' }],
  };
}

function quarantine(lane: Lane, note: Note, reason: string): Step {
  return { ...NOTHING, lane: { ...lane, phase: 'quarantined', quarantine: reason }, notes: [note] };
}
