/**
 * When a sequence reaches its maxId, from samples of what one process sees: the frontier (the
 * highest ID of any ticket it fetched; ticket numbers are shared, so the frontier moves with the
 * whole fleet's fetches, in maxId's units, gaps of unused stripes included), and its own counts of
 * IDs fetched and handed out.
 *
 * The frontier runs ahead of what was handed out by what the processes hold cached (about two
 * seconds of each one's demand, range-cache.ts), and that lead grows in bursts while caches warm
 * up. So the frontier's rate is scaled by the share of what this process fetched that it also
 * handed out over the same span (1 when steady; below 1 while caches fill), and the time left adds
 * how long this process's own cache lasts at its own rate: the fleet's caches drain about as fast,
 * since each holds about the same seconds of its own demand. Pure: the tracker (capacity.ts) keeps
 * the samples.
 */

/**
 * The rate is measured from the last sample at least this old until now: a change in load shows
 * in full within this window. When this process fetched nothing since (a big block lasts it longer
 * than the window), from the last sample before its last fetch: the rate then falls as the time
 * without a fetch grows, and is measured again at the next.
 */
export const CAPACITY_WINDOW_MS = 5 * 60_000;
/** No rate over a shorter span: the first fetches (a range and its prefetch) come in a burst. */
export const CAPACITY_MIN_SPAN_MS = 5000;

/** What one process saw at an instant. */
export interface CapacitySample {
  readonly at: number;
  /** Highest ID fetched by then. */
  readonly frontier: bigint;
  /** IDs this process had fetched by then, and handed out. */
  readonly fetched: bigint;
  readonly issued: bigint;
}

/** The rate and the time left; null without a rate. */
export interface Forecast {
  /** Of maxId's range per second, as the fleet takes it. */
  readonly idsPerSecond: number | null;
  /** Until the sequence answers exhausted: 0 when nothing is left, null without a positive rate. */
  readonly secondsLeft: number | null;
}

/**
 * The sample a rate is measured from: the newest at least `windowMs` before `now` with a fetch of
 * this process after it (its frontier below now's); the oldest while there is none.
 */
export function anchorOf(
  samples: readonly CapacitySample[],
  now: CapacitySample,
  windowMs: number,
): CapacitySample | undefined {
  let anchor = samples[0];
  for (const s of samples) if (s.frontier < now.frontier && s.at <= now.at - windowMs) anchor = s;
  return anchor;
}

/** The forecast at `now` from `samples` (oldest first), for `maxId`, with `cached` IDs in this process's cache. */
export function forecast(
  samples: readonly CapacitySample[],
  now: CapacitySample,
  maxId: bigint,
  cached: bigint,
  windowMs = CAPACITY_WINDOW_MS,
): Forecast {
  const anchor = anchorOf(samples, now, windowMs);
  if (anchor === undefined || now.at - anchor.at < CAPACITY_MIN_SPAN_MS)
    return { idsPerSecond: null, secondsLeft: null };
  const seconds = (now.at - anchor.at) / 1000;
  const moved = Number(now.frontier - anchor.frontier);
  const fetched = Number(now.fetched - anchor.fetched);
  const issued = Number(now.issued - anchor.issued);
  // The frontier moves only when this process fetches: no fetch, no move, no rate to scale.
  const rate = moved <= 0 || fetched <= 0 ? 0 : (moved / seconds) * (issued / fetched);
  const left = maxId - now.frontier;
  if (left <= 0n && cached <= 0n) return { idsPerSecond: rate, secondsLeft: 0 };
  if (!(rate > 0)) return { idsPerSecond: rate, secondsLeft: null };
  const drain = issued > 0 ? Number(cached) / (issued / seconds) : 0;
  return { idsPerSecond: rate, secondsLeft: Math.max(0, Number(left)) / rate + drain };
}
