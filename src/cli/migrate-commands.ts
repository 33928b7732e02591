/** `ticketd migrate plan|apply|verify`: moving a legacy AUTO_INCREMENT table onto a sequence. */
import type { Command } from 'commander';
import type { Allocator } from '../allocator/allocator.js';
import { parseBackendUrl, redact, type BackendAddress } from '../backend/backend-address.js';
import { assertSequenceName, parseUnsigned, type IdMode, type SequenceSettings } from '../core/sequence.js';
import { largestIncrement } from '../core/stripes.js';
import { ConfigError, MigrationRefusedError, SequenceNotFoundError } from '../core/errors.js';
import { applyMigration, keepReserve } from '../migrate/apply.js';
import {
  alterLegacy,
  connectLegacy,
  connectReadOnly,
  readIdsAbove,
  readLegacyTable,
  type LegacyConnection,
  type LegacyTable,
} from '../backend/mysql/legacy-table.js';
import {
  formatRollback,
  highestIdEverIssued,
  planRollback,
  ROWS_SHOWN,
  type RollbackPlan,
} from '../migrate/rollback.js';
import { applyArguments, formatPlan, planMigration, share, type MigrationPlan } from '../migrate/plan.js';
import { formatVerify, isClean, verifyMigration } from '../migrate/verify.js';
import { requireEveryBackend } from '../service/init.js';
import { rowsOf } from '../service/sequence-rows.js';
import type { TicketService } from '../service/ticket-service.js';
import { errorText } from '../util/error-text.js';

/**
 * Runs fn with an allocator and service on the configured backends, and closes them. With
 * `ifConfigured`, no backends configured is not an error: fn is then not called.
 */
export type WithService = (
  flags: { backends?: string | undefined; adminBackends?: string | undefined },
  fn: (a: Allocator, s: TicketService) => Promise<void>,
  options?: { ifConfigured?: boolean },
) => Promise<void>;

interface MigrateFlags {
  source?: string;
  table: string;
  column?: string;
  sequence?: string;
  blockSize?: string;
  headroom?: string;
  legacyReserve?: string;
  timestampColumn?: string;
  ids?: string;
  backends?: string;
  adminBackends?: string;
}

/** Adds the migrate commands to the program; `sourceFromEnv` reads TICKETD_SOURCE (or its file), used when --source is not given. */
export function addMigrateCommands(
  program: Command,
  withService: WithService,
  sourceFromEnv: () => string | undefined,
): void {
  const source = (flags: MigrateFlags): string => {
    const given = flags.source ?? sourceFromEnv();
    if (given === undefined || given === '')
      throw new ConfigError(
        '--source (or TICKETD_SOURCE, or TICKETD_SOURCE_FILE) is not set: the legacy database, as mysql://user:pass@host:port/db',
      );
    return given;
  };
  const migrate = program.command('migrate').description('move a legacy AUTO_INCREMENT table onto a ticketd sequence');
  const common = (command: Command): Command =>
    command
      .option('--source <url>', 'the legacy database, mysql://user:pass@host:port/db (TICKETD_SOURCE)')
      .requiredOption('--table <name>', 'the legacy table')
      .option(
        '--column <name>',
        "the ID column (default: the table's AUTO_INCREMENT column, else its one-column primary key)",
      )
      .option('--sequence <name>', 'the ticketd sequence (default: the table name)')
      .option(
        '--timestamp-column <name>',
        'DATETIME/TIMESTAMP column that shows growth (default: the first one, preferring created*)',
      )
      .option(
        '--ids <mode>',
        'ordered (default), opaque (a keyed permutation of its domain) or strict (real-time order across front ends)',
      );

  common(migrate.command('plan'))
    .description('read the legacy table (read-only) and print the sequence and app changes a migration needs')
    .option('--block-size <n>', 'IDs per ticket (default 100 for columns of 32 bits or fewer, else 10000)')
    .option('--headroom <n>', 'IDs the legacy app may take between plan and apply (default 10000)')
    .option(
      '--legacy-reserve <n>',
      "IDs kept above the sequence, up to the column's largest, for the old version's AUTO_INCREMENT (default: 1/16 of the free range; 0: none, apply then needs --alter)",
    )
    .option('--json', 'print the plan as JSON')
    .option(
      '--backends <urls>',
      'comma-separated mysql:// URLs (TICKETD_BACKENDS); when given, the plan says whether the sequence exists',
    )
    .action(async (flags: MigrateFlags & { json?: boolean }) => {
      const plan = await withLegacy(source(flags), flags, connectReadOnly, (_conn, table) =>
        Promise.resolve(planMigration(table, planOptions(flags, table))),
      );
      const { existing, fleet } = await readFleet(plan.settings.name, flags, withService);
      if (flags.json === true) console.log(JSON.stringify(planToJson(plan, existing, fleet), null, 2));
      else
        for (const line of formatPlan(plan, { sourceArgument: sourceArgument(flags), existing, fleet }))
          console.log(line);
      if (flags.source !== undefined && redact(flags.source) !== flags.source && flags.json !== true) {
        console.log(
          `(*** stands for the password of --source; or export TICKETD_SOURCE='<the URL>' and leave --source out)`,
        );
      }
    });

  common(migrate.command('apply'))
    .description(
      "move the legacy AUTO_INCREMENT above the sequence's maxId, then create the planned sequence on every backend; refuse if the legacy table has grown past startAfter",
    )
    .option('--block-size <n>', 'IDs per ticket (as planned)')
    .option('--headroom <n>', 'IDs the legacy app may take between plan and apply (default 10000)')
    .option('--start-after <n>', 'the startAfter a plan printed; apply refuses if the table has grown past it')
    .option(
      '--legacy-reserve <n>',
      "IDs kept above the sequence, up to the column's largest, for the old version's AUTO_INCREMENT (default: 1/16 of the free range; 0: none, apply then needs --alter)",
    )
    .option('--alter', 'also drop AUTO_INCREMENT from the legacy column (only once no old version inserts)')
    .option('--backends <urls>', 'comma-separated mysql:// URLs (TICKETD_BACKENDS)')
    .option('--admin-backends <urls>', 'accounts for schema and counter changes (TICKETD_ADMIN_BACKENDS)')
    .action((flags: MigrateFlags & { startAfter?: string; alter?: boolean }) =>
      runApply(source(flags), flags, withService),
    );

  common(migrate.command('verify'))
    .description(
      "check every legacy ID above startAfter: in the sequence's range only IDs ticketd handed out, no ID twice, AUTO_INCREMENT above maxId; exit 1 otherwise",
    )
    .option('--strict', 'fail, not warn, while the column still has AUTO_INCREMENT (once no old version runs)')
    .option('--backends <urls>', 'comma-separated mysql:// URLs (TICKETD_BACKENDS)')
    .action((flags: MigrateFlags & { strict?: boolean }) => runVerify(source(flags), flags, withService));

  common(migrate.command('rollback'))
    .description(
      'take a migration back to the legacy AUTO_INCREMENT, above every ID ticketd could have issued; plans, and --apply does it (the sequence must be retired first)',
    )
    .option('--apply', 'set AUTO_INCREMENT on the legacy table (adding it to the column if apply --alter removed it)')
    .option('--json', 'print the plan as JSON')
    .option('--backends <urls>', 'comma-separated mysql:// URLs (TICKETD_BACKENDS)')
    .action((flags: MigrateFlags & { apply?: boolean; json?: boolean }) =>
      runRollback(source(flags), flags, withService),
    );
}

/** `migrate rollback`: AUTO_INCREMENT above every ID of every block any backend's tickets could map to. */
async function runRollback(
  url: string,
  flags: MigrateFlags & { apply?: boolean; json?: boolean },
  withService: WithService,
): Promise<void> {
  await withLegacy(url, flags, flags.apply === true ? connectLegacy : connectReadOnly, async (conn, table) => {
    const name = sequenceName(flags, table);
    await withService(flags, async (allocator) => {
      // Every backend's counter bounds the tickets taken: one that does not answer could hide the highest.
      await requireEveryBackend(allocator, 'migrate');
      const rows = rowsOf(await allocator.readSequence(name));
      const settings = rows.find((r) => r.retired === true) ?? rows[0];
      if (settings === undefined)
        throw new MigrationRefusedError(`sequence ${name} does not exist on any backend: nothing to roll back`);
      const highestTicket = await allocator.fleet.highestTicketUsed(name);
      // Rows above maxId are the old version's reserve: only rows inside ticketd's range are foreign.
      const rowsAbove = (
        await readIdsAbove(conn, table, highestIdEverIssued(settings, highestTicket), ROWS_SHOWN)
      ).filter((id) => id <= settings.maxId);
      const plan = planRollback(settings, highestTicket, table, rowsAbove);
      const apply = flags.apply === true && plan.refusal === undefined && !plan.done;
      if (apply) await alterLegacy(conn, plan.statement);
      if (flags.json === true) console.log(JSON.stringify(rollbackToJson(plan, apply), null, 2));
      else for (const line of formatRollback(plan, apply)) console.log(line);
      if (plan.refusal !== undefined) throw new MigrationRefusedError(plan.refusal);
    });
  });
}

function rollbackToJson(plan: RollbackPlan, applied: boolean): Record<string, unknown> {
  return {
    sequence: plan.sequence,
    table: plan.table,
    highestTicket: String(plan.highestTicket),
    highestId: String(plan.highestId),
    nextAutoIncrement: String(plan.nextAutoIncrement),
    statement: plan.statement,
    refusal: plan.refusal ?? null,
    done: plan.done,
    applied,
  };
}

/** `migrate apply`: moves AUTO_INCREMENT into the reserve, creates the planned sequence on every backend, then (with --alter) drops AUTO_INCREMENT. */
async function runApply(
  url: string,
  flags: MigrateFlags & { startAfter?: string; alter?: boolean },
  withService: WithService,
): Promise<void> {
  await withLegacy(url, flags, connectLegacy, async (conn, table) => {
    const startAfter = flags.startAfter === undefined ? undefined : parseUnsigned(flags.startAfter, '--start-after');
    const plan = planMigration(table, { ...planOptions(flags, table), startAfter });
    const ran: string[] = [];
    await withService(flags, async (allocator, service) => {
      await requireEveryBackend(allocator, 'migrate');
      const choices = {
        startAfterGiven: startAfter !== undefined,
        reserveGiven: flags.legacyReserve !== undefined,
        alter: flags.alter === true,
      };
      const outcome = await applyMigration(plan, conn, allocator, service, choices);
      const s = outcome.settings;
      for (const statement of outcome.ran) console.log(`ran: ${statement}`);
      ran.push(...outcome.ran);
      const counter =
        outcome.counter === undefined
          ? ''
          : `; AUTO_INCREMENT at ${outcome.counter}, above maxId: the old version inserts there`;
      console.log(
        outcome.kind === 'created'
          ? `sequence ${s.name} created on ${allocator.backendCount} ${allocator.backendCount === 1 ? 'backend' : 'backends'}: blockSize=${s.blockSize} startAfter=${s.startAfter} maxId=${s.maxId} (legacy table at ${outcome.legacyHigh} below maxId${counter})`
          : `sequence ${s.name} already exists with blockSize=${s.blockSize} startAfter=${s.startAfter} maxId=${s.maxId}; left alone${counter}`,
      );
    });
    if (flags.alter === true && table.hasAutoIncrement && !ran.includes(plan.alterStatement)) {
      await alterLegacy(conn, plan.alterStatement);
      console.log(`ran: ${plan.alterStatement}`);
      // No insert without an ID lands above maxId any more: the sequence may be widened again.
      await withService(flags, (allocator) =>
        keepReserve(conn, { ...table, hasAutoIncrement: false }, plan.settings, allocator).then(() => undefined),
      );
    }
  });
}

/** `migrate verify`: every legacy ID above startAfter, one by one, against the cut of the column and the blocks handed out. */
async function runVerify(
  url: string,
  flags: MigrateFlags & { strict?: boolean },
  withService: WithService,
): Promise<void> {
  await withLegacy(url, flags, connectReadOnly, async (conn, table) => {
    const name = sequenceName(flags, table);
    await withService(flags, async (allocator) => {
      await requireEveryBackend(allocator, 'migrate');
      // A retired sequence (after a rollback) is verified too: its blocks may still be draining.
      const rows = rowsOf(await allocator.readSequence(name));
      const settings = rows.find((r) => r.retired === true) ?? rows[0];
      if (settings === undefined)
        throw new MigrationRefusedError(`sequence ${name} does not exist: run npx ticketd migrate apply first`);
      const report = await verifyMigration(conn, table, settings, allocator);
      for (const line of formatVerify(report, settings, table)) console.log(line);
      let failed = !isClean(report);
      if (table.hasAutoIncrement && report.counterProblem === undefined) {
        failed ||= flags.strict === true;
        const reserve =
          settings.maxId < table.maxId
            ? `next ${table.autoIncrement}, in the old version's reserve above maxId ${settings.maxId}`
            : `next ${table.autoIncrement}`;
        console.log(
          `${flags.strict === true ? 'problem' : 'warning'}: ${table.name}.${table.column} still has AUTO_INCREMENT (${reserve}). ` +
            'Once no old version inserts without an ID, drop it: ' +
            `npx ticketd migrate apply${sourceArgument(flags)} --table ${table.name} --column ${table.column} --sequence ${name} ` +
            `${applyArguments({ settings, table, legacyReserve: table.maxId - settings.maxId })} --alter`,
        );
      }
      process.exitCode = failed ? 1 : 0;
    });
  });
}

async function withLegacy<T>(
  url: string,
  flags: MigrateFlags,
  connect: (a: BackendAddress) => Promise<LegacyConnection>,
  fn: (conn: LegacyConnection, table: LegacyTable) => Promise<T>,
): Promise<T> {
  const source = parseBackendUrl(url);
  if (typeof source === 'string') throw new ConfigError(`--source: ${source}`);
  const conn = await connect(source).catch((error: unknown) => {
    throw new MigrationRefusedError(`--source ${source.label} did not answer: ${errorText(error)}`, { cause: error });
  });
  try {
    const table = await readLegacyTable(conn, {
      table: flags.table,
      column: flags.column,
      timestampColumn: flags.timestampColumn,
    });
    return await fn(conn, table);
  } finally {
    await conn.end().catch(() => undefined);
  }
}

function sequenceName(flags: MigrateFlags, table: LegacyTable): string {
  const name = flags.sequence ?? table.name;
  try {
    assertSequenceName(name);
  } catch (error) {
    throw new ConfigError(
      `--sequence: ${errorText(error)}${flags.sequence === undefined ? ' (the table name); name one' : ''}`,
    );
  }
  return name;
}

function planOptions(
  flags: MigrateFlags,
  table: LegacyTable,
): { sequence: string; blockSize?: bigint; headroom?: bigint; legacyReserve?: bigint; ids?: IdMode } {
  if (flags.ids !== undefined && flags.ids !== 'ordered' && flags.ids !== 'opaque' && flags.ids !== 'strict')
    throw new ConfigError(`--ids must be ordered, opaque or strict; got ${JSON.stringify(flags.ids)}`);
  return {
    sequence: sequenceName(flags, table),
    ...(flags.ids !== undefined && { ids: flags.ids }),
    ...(flags.blockSize !== undefined && { blockSize: parseUnsigned(flags.blockSize, '--block-size') }),
    ...(flags.headroom !== undefined && { headroom: parseUnsigned(flags.headroom, '--headroom') }),
    ...(flags.legacyReserve !== undefined && { legacyReserve: parseUnsigned(flags.legacyReserve, '--legacy-reserve') }),
  };
}

/** `--source` as the printed commands repeat it: as given (password as ***), or nothing when TICKETD_SOURCE gave it. */
function sourceArgument(flags: MigrateFlags): string {
  return flags.source === undefined ? '' : ` --source '${redact(flags.source)}'`;
}

/**
 * When backends are configured: the sequence as they hold it (if one has it), and how many there are
 * with their increment (the share of tickets they issue).
 */
async function readFleet(
  name: string,
  flags: MigrateFlags,
  withService: WithService,
): Promise<{ existing?: SequenceSettings; fleet?: { backends: number; increment: bigint } }> {
  const found: { existing?: SequenceSettings; fleet?: { backends: number; increment: bigint } } = {};
  await withService(
    flags,
    async (allocator, service) => {
      const existing = await service.settings(name).catch((error: unknown) => {
        if (!(error instanceof SequenceNotFoundError))
          console.error(`ticketd: warning: could not tell whether sequence ${name} exists: ${errorText(error)}`);
        return undefined;
      });
      if (existing !== undefined) found.existing = existing;
      const stripes = await allocator.fleet.stripes().catch(() => []);
      if (stripes.length > 0) found.fleet = { backends: allocator.backendCount, increment: largestIncrement(stripes) };
    },
    { ifConfigured: true },
  );
  return found;
}

function planToJson(
  plan: MigrationPlan,
  existing: SequenceSettings | undefined,
  fleet: { backends: number; increment: bigint } | undefined,
): Record<string, unknown> {
  const t = plan.table;
  const range = plan.settings.maxId - plan.settings.startAfter;
  const reach = share(fleet);
  return {
    table: t.name,
    column: t.column,
    columnType: t.columnType,
    hasAutoIncrement: t.hasAutoIncrement,
    maxExisting: String(t.maxExisting),
    autoIncrement: t.autoIncrement === undefined ? null : String(t.autoIncrement),
    growth: t.growth === undefined ? null : { ...t.growth, timestampColumn: t.timestampColumn },
    sequence: plan.settings.name,
    blockSize: String(plan.settings.blockSize),
    startAfter: String(plan.settings.startAfter),
    maxId: String(plan.settings.maxId),
    ids: plan.settings.ids,
    headroom: String(plan.headroom),
    legacyReserve: String(plan.legacyReserve),
    columnMax: String(t.maxId),
    lastsSeconds: plan.lastsSeconds === undefined ? null : plan.lastsSeconds * reach,
    idsLeft: String(range),
    // The share of the range the backends reach: each issues one residue class of the increment (the text plan prints it too).
    reach:
      fleet === undefined
        ? null
        : {
            backends: fleet.backends,
            increment: String(fleet.increment),
            share: reach,
            idsReachable: String(reach === 1 ? range : (range * BigInt(fleet.backends)) / fleet.increment),
          },
    alterStatement: plan.alterStatement,
    insertStatement: plan.insertStatement,
    exists: existing !== undefined,
  };
}
