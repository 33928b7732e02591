/**
 * Writes this front end's usage figures (core/usage.ts) to every backend every few seconds, and
 * once more at a clean stop, marked stopped; reads the fleet's figures back (core/fleet-usage.ts).
 * Accounting never stands in the way of issuing: a write that fails is logged once per episode and
 * made good by the next one, whose figures include everything since.
 */
import type { Allocator } from '../allocator/allocator.js';
import type { Clock } from '../core/clock.js';
import { BackendsUnavailableError } from '../core/errors.js';
import { fleetUsage, type FleetUsage } from '../core/fleet-usage.js';
import type { Holding, UsageCounts, UsageRow, UsageTally } from '../core/usage.js';
import type { Logger } from '../logger.js';
import { errorText } from '../util/error-text.js';
import { settleWithin } from '../util/settle-within.js';

/** How long a clean stop waits for its last write (the query and connect timeouts are 1 s each). */
export const STOP_WRITE_WAIT_MS = 3000;

/** What the reporter needs. */
export interface UsageReporterOptions {
  readonly allocator: Allocator;
  readonly logger: Logger;
  readonly tally: UsageTally;
  /** What the caches handed out and hold now (TicketService.holdings). */
  readonly holdings: () => Holding[];
  /** This front end instance: random at every start. */
  readonly instance: string;
  readonly flushEveryMs: number;
  /** This process's forecast for a sequence (TicketService.capacityStatus): seconds until maxId, or null. */
  readonly secondsLeft: (sequence: string) => number | null;
}

/** The flush loop of one front end. */
export class UsageReporter {
  readonly #options: UsageReporterOptions;
  #flush = 0;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> | undefined;
  #stopped = false;
  #failing = false;
  #preparing: Promise<void> | undefined;

  constructor(options: UsageReporterOptions) {
    this.#options = options;
  }

  /**
   * Writes every flushEveryMs from now on; first, in the background, creates the table where an
   * older schema lacks it (with the account for schema changes: the serving one may not).
   */
  start(): void {
    this.#preparing = this.#prepare();
    this.#timer = setInterval(() => void this.flush(), this.#options.flushEveryMs);
    this.#timer.unref();
  }

  async #prepare(): Promise<void> {
    const prepared = await this.#options.allocator.onUsageStores((s) => s.prepare());
    const missing = prepared.filter((a) => a.ok && !a.value).map((a) => a.backend);
    if (missing.length > 0)
      this.#options.logger.warn(
        { backends: missing },
        `backends ${missing.join(', ')} lack ticketd_usage and the account may not create it: IDs lost are not counted there until npx ticketd init runs`,
      );
  }

  /** This front end's figures now, per sequence. */
  figures(): Map<string, UsageCounts> {
    return this.#options.tally.figures(this.#options.holdings(), this.#stopped);
  }

  /** Writes the figures to every backend that answers; one write at a time (a tick during one is skipped). */
  flush(): Promise<void> {
    if (this.#writing !== undefined) return this.#writing;
    this.#writing = this.#write().finally(() => {
      this.#writing = undefined;
    });
    return this.#writing;
  }

  /**
   * The last write of a clean stop, once nothing more is handed out (after the listeners drained):
   * what is still cached counts as abandoned for `shutdown`, and the rows say the instance stopped.
   */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#stopped = true;
    const last = async (): Promise<void> => {
      await this.#preparing;
      await this.#writing;
      await this.flush();
    };
    // A backend that hangs must not hold a shutdown up: its rows then read as a crash's.
    await settleWithin([last()], STOP_WRITE_WAIT_MS);
  }

  async #write(): Promise<void> {
    const flush = ++this.#flush;
    const { instance, flushEveryMs } = this.#options;
    const rows: UsageRow[] = [...this.figures()].map(([sequence, counts]) => ({
      sequence,
      instance,
      flush,
      stopped: this.#stopped,
      flushEveryMs,
      // A stopped instance forecasts nothing: the fleet's figure comes from the running ones.
      secondsLeft: this.#stopped ? null : this.#options.secondsLeft(sequence),
      counts,
    }));
    const answers = await this.#options.allocator.onUsageStores((s) => s.write(instance, flush, rows));
    const failed = answers.flatMap((a) => (a.ok ? [] : [`${a.backend}: ${errorText(a.error)}`]));
    if (failed.length > 0 && !this.#failing)
      this.#options.logger.warn({ failed }, `usage figures not written on ${failed.join('; ')}`);
    else if (failed.length === 0 && this.#failing) this.#options.logger.info({}, 'usage figures written again');
    this.#failing = failed.length > 0;
  }
}

/** The fleet's figures as read now, with the backends that did not answer. */
export interface FleetUsageRead {
  readonly sequences: FleetUsage[];
  readonly unanswered: readonly { readonly backend: string; readonly reason: string }[];
}

/** Reads every backend's rows (of one sequence, when named); fails when none answered. */
export async function readFleetUsage(allocator: Allocator, sequence?: string): Promise<FleetUsageRead> {
  const answers = await allocator.onUsageStores((s) => s.read(sequence));
  const unanswered = answers.flatMap((a) => (a.ok ? [] : [{ backend: a.backend, reason: errorText(a.error) }]));
  if (answers.length > 0 && unanswered.length === answers.length)
    throw new BackendsUnavailableError(
      `no backend answered with the usage figures: ${unanswered.map((u) => `${u.backend}: ${u.reason}`).join('; ')}`,
    );
  return { sequences: fleetUsage(answers.flatMap((a) => (a.ok ? a.value : []))), unanswered };
}

/** The fleet's figures for every scrape and page view, read at most once per `maxAgeMs`. */
export class FleetUsageView {
  readonly #read: () => Promise<FleetUsageRead>;
  readonly #clock: Clock;
  readonly #maxAgeMs: number;
  #last: { at: number; read: Promise<FleetUsageRead> } | undefined;

  constructor(read: () => Promise<FleetUsageRead>, clock: Clock, maxAgeMs: number) {
    this.#read = read;
    this.#clock = clock;
    this.#maxAgeMs = maxAgeMs;
  }

  /** The latest read, or a new one when it is older than maxAgeMs (or failed). */
  read(): Promise<FleetUsageRead> {
    const now = this.#clock();
    if (this.#last === undefined || now - this.#last.at >= this.#maxAgeMs) {
      const read = this.#read();
      this.#last = { at: now, read };
      read.catch(() => {
        if (this.#last?.read === read) this.#last = undefined;
      });
    }
    return this.#last.read;
  }
}
