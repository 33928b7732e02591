/** What the allocator reports as it works. Metrics implement it; the default does nothing. */

/** Events from the allocator, each cheap enough to call on every ticket fetch. */
export interface AllocatorEvents {
  /** One run of REPLACEs on a backend for a sequence: how long it took, how many tickets it got, whether it failed. */
  ticketFetch(backend: string, sequence: string, seconds: number, tickets: number, failed: boolean): void;
  /** A refill went to another backend because `from` (first in turn) was unusable or failed. */
  failover(sequence: string, from: string): void;
  /** A counter was found at or below a ticket already used; `action` is what was done about it. */
  regression(backend: string, sequence: string, action: 'advanced' | 'quarantined'): void;
  /** A peer refused a claim for tickets of `backend`: claimed before, or at or below the floor. Nothing was served. */
  claimRefused(backend: string, sequence: string, reason: 'duplicate' | 'below-floor'): void;
  /** Tickets of `backend` no peer could claim (served on the process marks, or refused under TICKETD_CLAIMS=required). */
  unclaimed(backend: string, sequence: string, tickets: number): void;
}

/** Events that go nowhere. */
export const NO_EVENTS: AllocatorEvents = Object.freeze({
  ticketFetch() {},
  failover() {},
  regression() {},
  claimRefused() {},
  unclaimed() {},
});

/** `events` with each backend's label replaced by its name (`names`, by label; "?" for a label not in it). */
export function namedEvents(events: AllocatorEvents, names: ReadonlyMap<string, string>): AllocatorEvents {
  const name = (label: string): string => names.get(label) ?? '?';
  const named: AllocatorEvents = {
    ticketFetch: (backend, sequence, seconds, tickets, failed) =>
      events.ticketFetch(name(backend), sequence, seconds, tickets, failed),
    failover: (sequence, from) => events.failover(sequence, name(from)),
    regression: (backend, sequence, action) => events.regression(name(backend), sequence, action),
    claimRefused: (backend, sequence, reason) => events.claimRefused(name(backend), sequence, reason),
    unclaimed: (backend, sequence, tickets) => events.unclaimed(name(backend), sequence, tickets),
  };
  return Object.freeze(named);
}
