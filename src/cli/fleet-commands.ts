/**
 * Commands for changes to the fleet itself (docs/operating.md): `fence` after every backend was
 * restored, `backends add|remove` to grow and shrink it.
 */
import type { Command } from 'commander';
import { Allocator } from '../allocator/allocator.js';
import {
  backendIndexOf,
  backendLetter,
  displayUrl,
  parseBackendUrl,
  type BackendAddress,
} from '../backend/backend-address.js';
import type { RestoreReport } from '../backend/ticket-backend.js';
import { readTextFile } from '../util/read-file.js';
import { errorText } from '../util/error-text.js';
import type { Config } from '../config/load-config.js';
import { silentLogger } from '../logger.js';
import { planAdd, planRemove, retireLeaving, seedJoining, type FleetStep } from '../service/fleet-changes.js';
import { DEFAULT_FENCE_MARGIN } from '../core/fence.js';
import { parseUnsigned } from '../core/sequence.js';
import { ConfigError } from '../core/errors.js';
import { applyFences, planFences, type SequenceFence } from '../service/fence.js';
import { WorkerPools } from '../service/worker-pools.js';
import type { WithService } from './migrate-commands.js';

interface FenceFlags {
  apply?: boolean;
  margin?: string;
  tickets?: string;
  backends?: string;
  adminBackends?: string;
}

interface RestoreFlags {
  from: string;
  backends?: string;
  adminBackends?: string;
}

interface BackendsFlags {
  increment?: string;
  seed?: boolean;
  apply?: boolean;
  backends?: string;
  adminBackends?: string;
}

/** The configured backends (TICKETD_BACKENDS, flags, config file). */
export type FleetConfig = (flags: { backends?: string | undefined; adminBackends?: string | undefined }) => Config;

/** Adds `fence` and `backends add|remove|restore` to the program. */
export function addFleetCommands(program: Command, withService: WithService, fleetConfig: FleetConfig): void {
  const backends = program
    .command('backends')
    .description('grow or shrink the fleet, step by step (docs/operating.md)');
  backends
    .command('add <url>')
    .description('the steps of adding a backend, each marked done or to do; --seed does the seeding step')
    .option(
      '--increment <n>',
      'the auto_increment_increment every backend moves to (default: the current one if it leaves room, else 16)',
    )
    .option('--seed', 'create the schema and every sequence on it, its counters above every ticket used anywhere')
    .option('--backends <urls>', 'the fleet as it is now (TICKETD_BACKENDS)')
    .option('--admin-backends <urls>', 'accounts for schema and counter changes (TICKETD_ADMIN_BACKENDS)')
    .action(async (url: string, flags: BackendsFlags) => {
      const increment = flags.increment === undefined ? undefined : parsePositive(flags.increment, '--increment');
      await withFleet(fleetConfig(flags), url, async (allocator, letter, urls) => {
        let plan = await planAdd(allocator, increment, urls);
        if (flags.seed === true) {
          for (const s of await seedJoining(allocator, plan))
            console.log(`seeded ${s.sequence}: next ticket ${s.nextTicket}`);
          plan = await planAdd(allocator, plan.increment, urls);
        }
        console.log(
          `adding ${urls[urls.length - 1]} as backend ${letter}: auto_increment_increment=${plan.increment}, auto_increment_offset=${plan.offset}`,
        );
        printSteps(plan.steps);
      });
    });
  backends
    .command('remove <url>')
    .description(
      'the steps of removing a backend; --apply writes its floors on the others (after the front ends stopped using it)',
    )
    .option('--apply', 'write floors of its class on every other backend at its counters')
    .option('--backends <urls>', 'the fleet as it is now (TICKETD_BACKENDS)')
    .option('--admin-backends <urls>', 'accounts for schema and counter changes (TICKETD_ADMIN_BACKENDS)')
    .action(async (url: string, flags: BackendsFlags) => {
      await withFleet(fleetConfig(flags), url, async (allocator, _letter, urls) => {
        if (flags.apply === true)
          for (const f of await retireLeaving(allocator))
            console.log(`floor of ${f.sequence} at ticket ${f.floor} on every other backend`);
        console.log(`removing ${urls[urls.length - 1]}`);
        printSteps(await planRemove(allocator, urls));
      });
    });

  addRestoreCommand(backends, withService, fleetConfig);

  program
    .command('fence')
    .description(
      'after every backend was restored from backups: move every counter past anything issued since (plans; --apply moves them)',
    )
    .option('--apply', 'move the counters (without it, only the plan is printed)')
    .option(
      '--margin <x>',
      `factor on the rate measured from the claims times the time since the newest claim (default ${DEFAULT_FENCE_MARGIN})`,
    )
    .option(
      '--tickets <n>',
      'your bound instead: at most this many tickets of any sequence were taken since the backup',
    )
    .option('--backends <urls>', 'comma-separated mysql:// URLs (TICKETD_BACKENDS)')
    .option('--admin-backends <urls>', 'accounts for counter changes (TICKETD_ADMIN_BACKENDS)')
    .action(async (flags: FenceFlags) => {
      const margin = flags.margin === undefined ? DEFAULT_FENCE_MARGIN : Number(flags.margin);
      if (!Number.isFinite(margin) || margin < 1)
        throw new ConfigError(`--margin must be a number ≥ 1; got ${JSON.stringify(flags.margin)}`);
      const ticketsBound = flags.tickets === undefined ? undefined : parsePositive(flags.tickets, '--tickets');
      await withService(flags, async (allocator) => {
        const fences = await planFences(allocator, { margin, ...(ticketsBound !== undefined && { ticketsBound }) });
        for (const f of fences) console.log(describeFence(f));
        for (const f of fences.filter((s) => s.strict)) {
          console.log(
            `strict sequence ${f.sequence}: its bound is not fenced, and its restored bound may lie below IDs already issued; retire it (npx ticketd sequences retire ${f.sequence}) and create a new one: fence --apply refuses until then (docs/strict-sequences.md)`,
          );
        }
        const pools = new WorkerPools({ allocator });
        for (const p of await pools.list()) {
          console.log(
            `worker pool ${p.name}: every worker ID held ${(p.ttlMs + p.reuseDelayMs) / 1000} s from the fence, its next holders above the fence's time + ${(p.ttlMs + p.maxSkewMs) / 1000} s`,
          );
        }
        if (flags.apply !== true) {
          console.log(
            `nothing changed: run npx ticketd fence --apply${flags.tickets === undefined ? '' : ` --tickets ${flags.tickets}`}${flags.margin === undefined ? '' : ` --margin ${flags.margin}`} to move the counters, then start the front ends`,
          );
          return;
        }
        await applyFences(allocator, fences);
        const fencedPools = await pools.fence();
        console.log(
          `fenced ${fences.length} ${fences.length === 1 ? 'sequence' : 'sequences'} and ${fencedPools.length} worker ${fencedPools.length === 1 ? 'pool' : 'pools'}: every backend's counter is at or past the next ticket above; start the front ends`,
        );
      });
    });
}

/** Runs fn on an allocator holding the fleet with `url` last (joining or leaving) and its letter there. */
async function withFleet(
  config: Config,
  url: string,
  fn: (allocator: Allocator, letter: string, urls: string[]) => Promise<void>,
): Promise<void> {
  const parsed = parseBackendUrl(url);
  if (typeof parsed === 'string') throw new ConfigError(`backend ${parsed}`);
  const others = (list: readonly BackendAddress[]): BackendAddress[] => list.filter((b) => b.label !== parsed.label);
  const fleet = [...others(config.backends), parsed];
  const admin = config.adminBackends.length === 0 ? undefined : [...others(config.adminBackends), parsed];
  const allocator = new Allocator({
    backends: fleet,
    ...(admin !== undefined && { adminBackends: admin }),
    logger: silentLogger,
  });
  try {
    await fn(allocator, backendLetter(fleet.length - 1), fleet.map(displayUrl));
  } finally {
    await allocator.close();
  }
}

/** `backends restore`: one backend from a dump, while the front ends serve (docs/operating.md, "Replicas and restores"). */
function addRestoreCommand(backends: Command, withService: WithService, fleetConfig: FleetConfig): void {
  backends
    .command('restore <backend>')
    .description(
      'restore one backend (a letter or its URL) from a dump while the front ends serve: loaded into a staging database, then merged by additions only (docs/operating.md)',
    )
    .requiredOption('--from <file>', 'the dump (mysqldump or mariadb-dump of the backend database)')
    .option('--backends <urls>', 'the fleet (TICKETD_BACKENDS)')
    .option('--admin-backends <urls>', 'accounts for schema and counter changes (TICKETD_ADMIN_BACKENDS)')
    .action(async (backend: string, flags: RestoreFlags) => {
      const label = restoreTarget(fleetConfig(flags), backend);
      let dump: string;
      try {
        dump = readTextFile(flags.from);
      } catch (error) {
        throw new ConfigError(`--from: ${errorText(error)}`);
      }
      await withService(flags, async (allocator) => {
        const report = await allocator.fleet.onOne(label, (b) => b.restoreFromDump(dump));
        for (const line of describeRestore(label, flags.from, report)) console.log(line);
      });
    });
}

/** The label of the backend a letter (A, B…) or a URL names among the configured ones. */
function restoreTarget(config: Config, backend: string): string {
  const index = backendIndexOf(backend);
  const byLetter = index === undefined ? undefined : config.backends[index];
  if (byLetter !== undefined) return byLetter.label;
  const parsed = parseBackendUrl(backend);
  const byUrl = typeof parsed === 'string' ? undefined : config.backends.find((b) => b.label === parsed.label);
  if (byUrl !== undefined) return byUrl.label;
  throw new ConfigError(
    `backend ${JSON.stringify(backend)} is not among TICKETD_BACKENDS: give its letter (${config.backends.map((_, i) => backendLetter(i)).join(', ')}) or its URL`,
  );
}

function describeRestore(label: string, file: string, r: RestoreReport): string[] {
  const lines = [`restoring ${label} from ${file}: ${r.statements} statements loaded into a staging database`];
  if (r.leftOut.length > 0)
    lines.push(`left out of the dump: ${r.leftOut.join(', ')} (they reach past the staging database)`);
  if (r.tablesLeftOut.length > 0) lines.push(`not ticketd's, left alone: ${r.tablesLeftOut.join(', ')}`);
  for (const t of r.tablesCreated) lines.push(`created ${t}`);
  for (const c of r.countersRaised) lines.push(`counter of ${c.sequence} raised from ${c.from} to ${c.to}`);
  for (const a of r.rowsAdded) lines.push(`${a.table}: ${a.rows} ${a.rows === 1 ? 'row' : 'rows'} added`);
  for (const s of r.retiredAgain) lines.push(`retired sequence ${s}: its ticket table takes no tickets`);
  const changed = r.tablesCreated.length + r.countersRaised.length + r.rowsAdded.length > 0;
  lines.push(
    changed
      ? `restored ${label}: only additions, nothing lowered; running it again changes nothing more`
      : `restored ${label}: it already held everything the dump holds; nothing changed`,
  );
  return lines;
}

function printSteps(steps: readonly FleetStep[]): void {
  steps.forEach((step, i) => {
    console.log(`${i + 1}. [${step.state}] ${step.title}`);
    for (const line of step.how) console.log(`     ${line}`);
  });
}

function parsePositive(text: string, flag: string): bigint {
  try {
    const n = parseUnsigned(text, flag);
    if (n > 0n) return n;
  } catch {
    // worded below
  }
  throw new ConfigError(`${flag} must be a positive integer; got ${JSON.stringify(text)}`);
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
