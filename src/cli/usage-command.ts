/** `ticketd sequences usage [NAME]`: how many IDs the fleet handed out and lost, and why (docs/operating.md). */
import type { Command } from 'commander';
import { LOSS_REASONS } from '../core/usage.js';
import { formatTimeLeft } from '../http/human-figures.js';
import type { FleetUsage } from '../core/fleet-usage.js';
import type { FleetUsageRead } from '../service/usage-reporter.js';
import type { WithService } from './migrate-commands.js';

/** Adds `usage [name]` to the `sequences` command. */
export function addUsageCommand(sequences: Command, withService: WithService): void {
  sequences
    .command('usage [name]')
    .description(
      'IDs each sequence handed out, lost (per reason: shutdown, crash, retired, surplus) and cached, and the time left until its maxId at the recent rate, over every front end, from the figures they write to the backends',
    )
    .option('--json', 'print the figures as JSON')
    .option('--backends <urls>', 'comma-separated mysql:// URLs (TICKETD_BACKENDS)')
    .action(async (name: string | undefined, flags: { json?: boolean; backends?: string }) => {
      await withService(flags, async (_allocator, service) => {
        const read = await service.fleetUsage(name === undefined ? {} : { sequence: name });
        // A backend that did not answer may hold rows newer than the others': say which, and why.
        for (const u of read.unanswered)
          console.error(
            `ticketd: warning: backend ${u.backend} did not answer, so figures it alone holds are missing: ${u.reason}`,
          );
        if (flags.json === true) console.log(JSON.stringify(usageJson(read), null, 2));
        else if (read.sequences.length === 0)
          console.log(name === undefined ? 'no front end has written usage figures yet' : `no figures for ${name} yet`);
        else for (const s of read.sequences) console.log(usageLine(s));
      });
    });
}

/** One sequence's figures in one tab-separated line, as `sequences list` prints its sequences. */
export function usageLine(s: FleetUsage): string {
  const lost = LOSS_REASONS.map((reason) => `lost.${reason}=${s.lost[reason]}`).join('\t');
  const { running, stopped, crashed } = s.instances;
  return [
    s.sequence,
    `handedOut=${s.handedOut}`,
    `lost=${s.lostTotal}`,
    `lossRatio=${lossPercent(s.lossRatio)}`,
    lost,
    `cached=${s.cached}`,
    `returned=${s.returned}`,
    `leased=${s.leased}`,
    `timeLeft=${formatTimeLeft(s.secondsLeft)}`,
    `frontEnds=${running} running, ${stopped} stopped, ${crashed} crashed`,
  ].join('\t');
}

/** A loss ratio as a percentage with two decimals; `-` before any ID was used. */
export function lossPercent(ratio: number | null): string {
  return ratio === null ? '-' : `${(ratio * 100).toFixed(2)}%`;
}

function usageJson(read: FleetUsageRead): unknown {
  return { sequences: read.sequences, unanswered: read.unanswered };
}
