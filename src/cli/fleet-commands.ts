/** Commands for changes to the fleet itself (docs/operating.md): `fence` after every backend was restored. */
import type { Command } from 'commander';
import { DEFAULT_FENCE_MARGIN } from '../core/fence.js';
import { parseUnsigned } from '../core/sequence.js';
import { ConfigError } from '../errors.js';
import { applyFences, planFences, type SequenceFence } from '../service/fence.js';
import type { WithService } from './migrate-commands.js';

interface FenceFlags {
  apply?: boolean;
  margin?: string;
  tickets?: string;
  backends?: string;
  adminBackends?: string;
}

/** Adds `fence` to the program. */
export function addFleetCommands(program: Command, withService: WithService): void {
  program
    .command('fence')
    .description('after every backend was restored from backups: move every counter past anything issued since (plans; --apply moves them)')
    .option('--apply', 'move the counters (without it, only the plan is printed)')
    .option('--margin <x>', `factor on the rate measured from the claims times the time since the newest claim (default ${DEFAULT_FENCE_MARGIN})`)
    .option('--tickets <n>', 'your bound instead: at most this many tickets of any sequence were taken since the backup')
    .option('--backends <urls>', 'comma-separated mysql:// URLs (TICKETD_BACKENDS)')
    .option('--admin-backends <urls>', 'accounts for counter changes (TICKETD_ADMIN_BACKENDS)')
    .action(async (flags: FenceFlags) => {
      const margin = flags.margin === undefined ? DEFAULT_FENCE_MARGIN : Number(flags.margin);
      if (!Number.isFinite(margin) || margin < 1) throw new ConfigError(`--margin must be a number ≥ 1; got ${JSON.stringify(flags.margin)}`);
      const ticketsBound = flags.tickets === undefined ? undefined : parseTickets(flags.tickets);
      await withService(flags, async (allocator) => {
        const fences = await planFences(allocator, { margin, ...(ticketsBound !== undefined && { ticketsBound }) });
        for (const f of fences) console.log(describeFence(f));
        if (flags.apply !== true) {
          console.log(`nothing changed: run npx ticketd fence --apply${flags.tickets === undefined ? '' : ` --tickets ${flags.tickets}`}${flags.margin === undefined ? '' : ` --margin ${flags.margin}`} to move the counters, then start the front ends`);
          return;
        }
        await applyFences(allocator, fences);
        console.log(`fenced ${fences.length} ${fences.length === 1 ? 'sequence' : 'sequences'}: every backend's counter is at or past the next ticket above; start the front ends`);
      });
    });
}

function parseTickets(text: string): bigint {
  try {
    const n = parseUnsigned(text, '--tickets');
    if (n > 0n) return n;
  } catch {
    // worded below
  }
  throw new ConfigError(`--tickets must be a positive integer; got ${JSON.stringify(text)}`);
}

function describeFence(f: SequenceFence): string {
  const since = f.sinceMs === undefined ? 'no claims' : `newest claim ${formatAge(f.sinceMs)} ago`;
  const why =
    f.basis === 'bound'
      ? 'by your --tickets bound'
      : f.basis === 'rate'
        ? `${since}, ${f.ticketsPerSecond!.toFixed(1)} counter steps/s over the claims kept`
        : `${since}: no rate to measure, the minimum (give --tickets if it was busy since the backup)`;
  const warning = f.exhausts ? ' — past maxId: the sequence would be exhausted' : '';
  return `sequence ${f.sequence}: highest ticket ${f.highestTicket}; next ticket ≥ ${f.nextTicket} (+${f.advance}, ${why})${warning}`;
}

function formatAge(ms: number): string {
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}
