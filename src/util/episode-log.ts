/**
 * A fault that repeats per request, logged once per episode: one line when it starts, one with its
 * count when it has been quiet for a while. A backend cut off for 8 s made one front end write
 * 4,006 "prefetch failed" lines; a restored backend, one warning per ticket a claim refused. Backend
 * outages were already logged this way (allocator/backend-health.ts).
 */

/** The two levels an episode is written at: a pino logger is one (the ground floor names no logger of its own). */
export interface EpisodeLogger {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

/** How long a fault must stay away before its episode is over. */
export const EPISODE_QUIET_MS = 5000;

interface Episode {
  readonly fields: Record<string, unknown>;
  readonly message: string;
  readonly startedAt: number;
  count: number;
  readonly timer: ReturnType<typeof setTimeout>;
}

/** Episodes of repeated faults, keyed by what repeats (a sequence, a pool, a backend). */
export class EpisodeLog {
  readonly #logger: EpisodeLogger;
  readonly #quietMs: number;
  readonly #clock: () => number;
  readonly #open = new Map<string, Episode>();

  constructor(logger: EpisodeLogger, options: { quietMs?: number; clock?: () => number } = {}) {
    this.#logger = logger;
    this.#quietMs = options.quietMs ?? EPISODE_QUIET_MS;
    this.#clock = options.clock ?? Date.now;
  }

  /** One more occurrence of the fault `key`: the first of an episode is logged at warn, the rest counted. */
  note(key: string, fields: Record<string, unknown>, message: string): void {
    const open = this.#open.get(key);
    if (open !== undefined) {
      open.count++;
      open.timer.refresh();
      return;
    }
    this.#logger.warn({ ...fields, episode: 'start' }, message);
    const timer = setTimeout(() => this.#end(key), this.#quietMs);
    timer.unref();
    this.#open.set(key, { fields, message, startedAt: this.#clock(), count: 1, timer });
  }

  /** Ends every open episode now, each with its count (at shutdown). */
  close(): void {
    for (const key of [...this.#open.keys()]) this.#end(key);
  }

  #end(key: string): void {
    const episode = this.#open.get(key);
    if (episode === undefined) return;
    clearTimeout(episode.timer);
    this.#open.delete(key);
    const seconds = Math.round((this.#clock() - episode.startedAt) / 1000);
    this.#logger.info(
      { ...episode.fields, episode: 'end', count: episode.count, seconds },
      `${episode.message}: ${episode.count} times in ${seconds} s, then no more`,
    );
  }
}
