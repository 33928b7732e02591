/** What the allocator knows of one backend, and the views of it shown to operators. */
import type { TicketBackend } from '../backend/ticket-backend.js';
import type { Stripe } from '../core/ticket-math.js';
import { BackendsUnavailableError, SequenceExhaustedError, SequenceNotFoundError } from '../errors.js';
import type { Breaker, BreakerState } from './breaker.js';

/** Whether a backend has a sequence (with the same settings), and when that was last asked. */
export type Membership = { readonly kind: 'present' | 'absent' | 'conflict'; readonly checkedAt: number };

/** One backend with its breaker and per-sequence state. */
export interface Slot {
  readonly backend: TicketBackend;
  readonly breaker: Breaker;
  readonly membership: Map<string, Membership>;
  readonly exhausted: Set<string>;
  readonly quarantined: Map<string, string>;
  /** Sequences whose peers' claims are read and counter checked since the backend (re)joined. */
  readonly prepared: Set<string>;
  /** Sequences whose tickets from this backend are being served without a claim (one log line per episode). */
  readonly unclaimed: Set<string>;
  readonly lastTicket: Map<string, bigint>;
  readonly stats: BackendStats;
  identity: string | undefined;
  warned: boolean;
  probeTimer: NodeJS.Timeout | undefined;
  lastDemandProbeAt: number;
  /** When tickets were last fetched from it: after an idle spell nothing known of it is trusted. */
  lastUsedAt: number;
}

/** Counters per backend, for operators. */
export interface BackendStats {
  tickets: number;
  fetches: number;
  failures: number;
  regressions: number;
}

/** A backend's state as shown to operators. */
export interface BackendStatus {
  readonly backend: string;
  readonly state: BreakerState;
  readonly identity: string | undefined;
  readonly stripe: { readonly increment: string; readonly offset: string } | undefined;
  readonly lastError: string | undefined;
  readonly stats: Readonly<BackendStats>;
}

/** A backend's state for one sequence. */
export interface BackendSequenceStatus {
  readonly backend: string;
  readonly state: BreakerState;
  readonly member: string;
  readonly lastTicket: string | null;
  readonly lastError: string | null;
  readonly exhausted: boolean;
  readonly quarantined: string | null;
  /** True while its tickets for the sequence find no peer to claim them (served or refused per TICKETD_CLAIMS). */
  readonly unclaimed: boolean;
}

/** A slot for a backend nothing is known of yet. */
export function newSlot(backend: TicketBackend, breaker: Breaker): Slot {
  return {
    backend,
    breaker,
    membership: new Map(),
    exhausted: new Set(),
    quarantined: new Map(),
    prepared: new Set(),
    unclaimed: new Set(),
    lastTicket: new Map(),
    stats: { tickets: 0, fetches: 0, failures: 0, regressions: 0 },
    identity: undefined,
    warned: false,
    probeTimer: undefined,
    lastDemandProbeAt: Number.NEGATIVE_INFINITY,
    lastUsedAt: Number.NEGATIVE_INFINITY,
  };
}

/** The operator view of a backend. */
export function statusOf(slot: Slot, stripe: Stripe | undefined): BackendStatus {
  return {
    backend: slot.backend.label,
    state: slot.breaker.state,
    identity: slot.identity,
    stripe: stripe && { increment: String(stripe.increment), offset: String(stripe.offset) },
    lastError: slot.breaker.lastError,
    stats: slot.stats,
  };
}

/** The operator view of a backend for one sequence. */
export function sequenceStatusOf(slot: Slot, name: string): BackendSequenceStatus {
  return {
    backend: slot.backend.label,
    state: slot.breaker.state,
    member: slot.membership.get(name)?.kind ?? 'unknown',
    lastTicket: slot.lastTicket.get(name)?.toString() ?? null,
    lastError: slot.breaker.lastError ?? null,
    exhausted: slot.exhausted.has(name),
    quarantined: slot.quarantined.get(name) ?? null,
    unclaimed: slot.unclaimed.has(name),
  };
}

/** Why a refill got no ticket from any backend: exhausted, unknown sequence, or unavailable. */
export function emptyHandedError(slots: readonly Slot[], sequence: string): Error {
  const withSequence = slots.filter((s) => s.membership.get(sequence)?.kind === 'present');
  if (withSequence.length > 0 && withSequence.every((s) => s.exhausted.has(sequence))) {
    return new SequenceExhaustedError(`sequence ${sequence} has no IDs left at or below its maxId`);
  }
  const answered = slots.filter((s) => s.membership.has(sequence));
  if (answered.length === slots.length && answered.every((s) => s.membership.get(sequence)?.kind === 'absent')) {
    return new SequenceNotFoundError(`sequence ${sequence} does not exist on any backend`);
  }
  const open = slots.filter((s) => !s.breaker.closed).map((s) => s.breaker.probeInMs);
  const retryInMs = open.length > 0 ? Math.min(...open) : 1000;
  const reasons = slots.map((s) => `${s.backend.label}: ${s.quarantined.get(sequence) ?? (s.unclaimed.has(sequence) ? 'no peer can take its claims' : undefined) ?? s.breaker.lastError ?? s.breaker.state}`);
  return new BackendsUnavailableError(`no backend issued a ticket for sequence ${sequence} (${reasons.join('; ')})`, {
    retryAfterSeconds: Math.max(1, Math.ceil(retryInMs / 1000)),
  });
}
