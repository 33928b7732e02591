/**
 * Which ticketd may read what (invariant 7 of design.md): a backend and a sequence say the oldest
 * ticketd that understands them, and a process older than that refuses them instead of guessing.
 *
 * ticketd 0.5 and older check nothing of the kind. They read every row of ticketd_sequences as an
 * ordered sequence (0.2, 0.3) or know only the schemes of their day (0.4, 0.5), and take tickets with
 * `REPLACE INTO tickets_<name> (stub) …`. So a sequence they must not serve is stored *gated*: its
 * settings in ticketd_gated_sequences, its row in ticketd_sequences a decoy none of them can use
 * (maxId 0: every block lies above it). When init gates a sequence an older version created, it
 * also renames the ticket table's `stub` column, so an old process that loaded the sequence before
 * cannot take another ticket from it.
 */

/** The version of this ticketd; a unit test holds it equal to package.json's. */
export const THIS_VERSION = '0.13.0';

/** The first version that reads gated sequences and checks needs_version: what a gated sequence needs at least. */
export const GATE_VERSION = '0.6.0';

/** The first version that knows retired sequences: what a retired sequence is gated for. */
export const RETIRE_VERSION = '0.8.0';

/** The first version that serves strict sequences: what a strict sequence is gated for. */
export const STRICT_VERSION = '0.10.0';

/** The column a retired sequence's ticket table gains: no ticketd's REPLACE gives it a value, so every one fails. */
export const RETIRED_COLUMN = 'retired_ticketd_0_8';

/** What a backend initialised by this version needs of the ticketd that uses it (ticketd_schema). */
export const BACKEND_NEEDS_VERSION = '0.6.0';

/** The ticket table column of a gated sequence: `stub` renamed, so 0.5 and older fail on their REPLACE. */
export const GATED_STUB_COLUMN = 'stub_ticketd_0_6_or_later';

/** The decoy settings a gated sequence's ticketd_sequences row holds for ticketd 0.5 and older. */
export const DECOY_SETTINGS = Object.freeze({ blockSize: 1n, startAfter: 0n, maxId: 0n });

/** Compares two `major.minor.patch` versions (a pre-release suffix is ignored): negative, 0 or positive. */
export function compareVersions(a: string, b: string): number {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  for (let i = 0; i < 3; i++) {
    const d = pa[i]! - pb[i]!;
    if (d !== 0) return d;
  }
  return 0;
}

/** True when this ticketd is at least the version something needs. */
export function understands(needsVersion: string, thisVersion: string = THIS_VERSION): boolean {
  return compareVersions(thisVersion, needsVersion) >= 0;
}

/** The version a sequence or backend needs when this ticketd is older than that; undefined when it understands it. */
export function newerNeeded(settings: { readonly needsVersion?: string | undefined }): string | undefined {
  return settings.needsVersion !== undefined && !understands(settings.needsVersion) ? settings.needsVersion : undefined;
}

/** The version a sequence of this mode needs, or undefined when every ticketd since 0.2 reads it right. */
export function gateFor(ids: 'ordered' | 'opaque' | 'strict'): string | undefined {
  // 0.2 and 0.3 serve an opaque sequence's raw ordered IDs, which can equal its permuted ones; a
  // release before strict would serve a strict sequence from cached blocks, out of order.
  if (ids === 'strict') return STRICT_VERSION;
  return ids === 'opaque' ? GATE_VERSION : undefined;
}

/** The higher of two versions (init never lowers what a backend needs). */
export function laterVersion(a: string, b: string): string {
  return compareVersions(a, b) >= 0 ? a : b;
}

function parseVersion(text: string): [number, number, number] {
  const match = /^(\d+)\.(\d+)\.(\d+)/.exec(text.trim());
  // An unreadable version is treated as newer than any: refusing is the safe side.
  if (match === null) return [Number.MAX_SAFE_INTEGER, 0, 0];
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}
