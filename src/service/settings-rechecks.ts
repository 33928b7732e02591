/**
 * When each sequence a process serves is read again from the backends: every SETTINGS_RECHECK_MS,
 * counted from when the last read was sent, on a timer rather than on a request, so that an idle
 * process learns of a retirement (or a widening) within the same bound as a busy one, and a request
 * pays nothing for it.
 */
import type { Clock } from '../core/clock.js';

/** What the rechecks need. */
export interface SettingsRechecksOptions {
  readonly everyMs: number;
  readonly clock: Clock;
  /** Reads the sequence again; resolves false when it is no longer served (no further recheck). */
  readonly recheck: (name: string) => Promise<boolean>;
}

/** One timer per served sequence; `close` stops them all. */
export class SettingsRechecks {
  readonly #o: SettingsRechecksOptions;
  readonly #timers = new Map<string, NodeJS.Timeout>();
  #closed = false;

  constructor(options: SettingsRechecksOptions) {
    this.#o = options;
  }

  /** Reads `name` again everyMs after `sentAt`, the time its last read was sent, and so on while it is served. */
  watch(name: string, sentAt: number): void {
    clearTimeout(this.#timers.get(name));
    if (this.#closed) return;
    const delay = Math.max(0, sentAt + this.#o.everyMs - this.#o.clock());
    const timer = setTimeout(() => {
      const sent = this.#o.clock();
      void this.#o
        .recheck(name)
        // A read that failed (no backend answered) is tried again on the same schedule.
        .catch(() => true)
        .then((served) => {
          if (this.#timers.get(name) !== timer) return;
          this.#timers.delete(name);
          if (served) this.watch(name, sent);
        });
    }, delay);
    // The process's own lifetime is decided by its listeners and close(), not by these reads.
    timer.unref();
    this.#timers.set(name, timer);
  }

  /** The sequence is no longer served: no more reads of it. */
  forget(name: string): void {
    clearTimeout(this.#timers.get(name));
    this.#timers.delete(name);
  }

  close(): void {
    this.#closed = true;
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }
}
