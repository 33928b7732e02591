/** Why a refill got no ticket from any backend, said from the backends' slots. */
import { BackendsUnavailableError, SequenceExhaustedError, SequenceNotFoundError } from '../core/errors.js';
import type { BackendSlot } from './backend-slot.js';

/** Why a refill got no ticket from any backend: exhausted, unknown sequence, or unavailable. */
export function emptyHandedError(slots: readonly BackendSlot[], sequence: string): Error {
  const withSequence = slots.filter((s) => s.membership(sequence)?.kind === 'present');
  if (withSequence.length > 0 && withSequence.every((s) => s.lane(sequence).phase === 'exhausted')) {
    return new SequenceExhaustedError(`sequence ${sequence} has no IDs left at or below its maxId`);
  }
  const answered = slots.filter((s) => s.membership(sequence) !== undefined);
  if (answered.length === slots.length && answered.every((s) => s.membership(sequence)?.kind === 'absent')) {
    return new SequenceNotFoundError(`sequence ${sequence} does not exist on any backend`);
  }
  const open = slots.filter((s) => !s.closed).map((s) => s.probeInMs);
  const retryInMs = open.length > 0 ? Math.min(...open) : 1000;
  const reasons = slots.map((s) => {
    const lane = s.lane(sequence);
    // A backend that failed says its own error first: that no peer takes its claims follows from the others failing.
    const failing = s.state !== 'up' && s.state !== 'unknown' ? s.lastError : undefined;
    return `${s.label}: ${lane.quarantine ?? failing ?? (lane.unclaimed ? 'no peer can take its claims' : undefined) ?? s.lastError ?? s.state}`;
  });
  return new BackendsUnavailableError(`no backend issued a ticket for sequence ${sequence} (${reasons.join('; ')})`, {
    retryAfterSeconds: Math.max(1, Math.ceil(retryInMs / 1000)),
  });
}
