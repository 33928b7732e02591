/** The sequences every reachable backend holds, gathered into one list. */
import type { Allocator } from '../allocator/allocator.js';
import type { SequenceSettings } from '../core/sequence.js';
import { BackendsUnavailableError } from '../core/errors.js';
import { errorText } from '../util/error-text.js';

/** A sequence as listed: its settings and the backends that have it. */
export interface SequenceListing {
  readonly settings: SequenceSettings;
  readonly backends: readonly string[];
}

/** The list, and the backends that did not answer. */
export interface SequenceList {
  readonly sequences: SequenceListing[];
  readonly unanswered: { backend: string; reason: string }[];
}

/** Every sequence found on a reachable backend, with the backends that have it; throws when none answered. */
export async function listSequences(allocator: Allocator): Promise<SequenceList> {
  const answers = await allocator.readSequences();
  if (answers.every((a) => !a.ok)) {
    throw new BackendsUnavailableError(
      `no backend answered while listing sequences (${answers.map((a) => `${a.backend}: ${errorText(a.error)}`).join('; ')})`,
    );
  }
  const listing = new Map<string, { settings: SequenceSettings; backends: string[] }>();
  for (const a of answers) {
    if (!a.ok) continue;
    for (const settings of a.value) {
      const seen = listing.get(settings.name) ?? { settings, backends: [] };
      // Retired on one backend is retired: a retirement under way shows as done where it is.
      if (settings.retired === true) seen.settings = settings;
      seen.backends.push(a.backend);
      listing.set(settings.name, seen);
    }
  }
  return {
    sequences: [...listing.values()].sort((a, b) => (a.settings.name < b.settings.name ? -1 : 1)),
    unanswered: answers.flatMap((a) => (a.ok ? [] : [{ backend: a.backend, reason: errorText(a.error) }])),
  };
}
