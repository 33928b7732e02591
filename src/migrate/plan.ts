/**
 * `ticketd migrate plan`: from what the legacy table shows, the sequence that takes over its IDs
 * and the changes the application needs. Pure: every figure comes from a LegacyTable reading.
 */
import { MIN_OPAQUE_DOMAIN } from 'ticketd-client';
import { DEFAULT_BLOCK_SIZE, MAX_BLOCK_SIZE, type IdMode, type SequenceSettings } from '../core/sequence.js';
import { MigrationRefusedError } from '../core/errors.js';
import { quoteIdentifier, type LegacyTable } from '../backend/mysql/legacy-table.js';
import { defaultReserve } from './cut-over.js';

/** Headroom when none is given: IDs the legacy app may still take during the cut-over. */
export const DEFAULT_HEADROOM = 10_000n;
/** Block size for columns of 32 bits or fewer, where big blocks would waste a scarce range. */
export const SMALL_COLUMN_BLOCK_SIZE = 100n;
const SMALL_COLUMN_MAX_ID = (1n << 32n) - 1n;

/** What the caller chose; everything else is read from the table. */
export interface PlanOptions {
  readonly sequence: string;
  readonly blockSize?: bigint | undefined;
  readonly headroom?: bigint | undefined;
  /** A startAfter chosen earlier (by a plan): apply then only checks that it still holds. */
  readonly startAfter?: bigint | undefined;
  /** Ordered (default) or opaque IDs (docs/opaque-ids.md, "In use"). */
  readonly ids?: IdMode | undefined;
  /** IDs kept above the sequence for the old version's AUTO_INCREMENT (default: 1/16 of the free range; 0 without AUTO_INCREMENT). */
  readonly legacyReserve?: bigint | undefined;
}

/** A migration plan. */
export interface MigrationPlan {
  readonly table: LegacyTable;
  readonly settings: SequenceSettings;
  readonly headroom: bigint;
  /** IDs above the sequence's maxId, up to the column's, left to the old version's AUTO_INCREMENT (cut-over.ts). */
  readonly legacyReserve: bigint;
  /** The highest ID the legacy table holds or will hand out next: max(MAX(id), AUTO_INCREMENT). */
  readonly legacyHigh: bigint;
  /** Seconds until maxId at the observed growth rate, when a rate was observed. */
  readonly lastsSeconds: number | undefined;
  /** Drops AUTO_INCREMENT from the column and keeps the rest of its definition. */
  readonly alterStatement: string;
  /** The insert the app uses from now on, passing the ID. */
  readonly insertStatement: string;
}

/** Builds the plan; throws MigrationRefusedError when the column has no room for the sequence. */
export function planMigration(table: LegacyTable, options: PlanOptions): MigrationPlan {
  const headroom = options.headroom ?? DEFAULT_HEADROOM;
  const blockSize =
    options.blockSize ?? (table.maxId <= SMALL_COLUMN_MAX_ID ? SMALL_COLUMN_BLOCK_SIZE : DEFAULT_BLOCK_SIZE);
  if (blockSize < 1n || blockSize > MAX_BLOCK_SIZE) {
    throw new MigrationRefusedError(`--block-size must be from 1 to ${MAX_BLOCK_SIZE}; got ${blockSize}`);
  }
  const legacyHigh = legacyHighOf(table);
  const startAfter = options.startAfter ?? legacyHigh + headroom;
  if (startAfter >= table.maxId) {
    throw new MigrationRefusedError(
      `${table.name}.${table.column} (${table.columnType}) holds at most ${table.maxId}; startAfter ${startAfter} leaves no IDs: widen the column first`,
    );
  }
  // Only a table with AUTO_INCREMENT has old-version writers to keep apart (cut-over.ts).
  const legacyReserve =
    options.legacyReserve ?? (table.hasAutoIncrement ? defaultReserve(table.maxId, startAfter) : 0n);
  const maxId = table.maxId - legacyReserve;
  if (legacyReserve < 0n || startAfter >= maxId) {
    throw new MigrationRefusedError(
      `--legacy-reserve ${legacyReserve} leaves no IDs between startAfter ${startAfter} and ${table.name}.${table.column}'s largest value ${table.maxId}: take a smaller reserve or widen the column first`,
    );
  }
  const ids = options.ids ?? 'ordered';
  if (ids === 'opaque' && maxId - startAfter < MIN_OPAQUE_DOMAIN) {
    throw new MigrationRefusedError(
      `--ids opaque needs at least ${MIN_OPAQUE_DOMAIN} IDs above startAfter ${startAfter}; ${table.name}.${table.column} (${table.columnType}) leaves ${maxId - startAfter}: widen the column or keep ordered IDs`,
    );
  }
  const lastsSeconds =
    table.growth === undefined || table.growth.idsPerSecond <= 0
      ? undefined
      : Number(maxId - startAfter) / table.growth.idsPerSecond;
  return {
    table,
    settings: Object.freeze({ name: options.sequence, blockSize, startAfter, maxId, ids }),
    headroom,
    legacyReserve,
    legacyHigh,
    lastsSeconds,
    alterStatement: alterStatementFor(table),
    insertStatement: insertStatementFor(table),
  };
}

/** The highest ID the legacy table holds or hands out next. */
export function legacyHighOf(table: Pick<LegacyTable, 'maxExisting' | 'autoIncrement'>): bigint {
  const ai = table.autoIncrement ?? 0n;
  return table.maxExisting > ai ? table.maxExisting : ai;
}

function alterStatementFor(table: LegacyTable): string {
  const nullability = table.nullable ? 'NULL' : 'NOT NULL';
  const comment = table.comment === '' ? '' : ` COMMENT '${table.comment.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
  return `ALTER TABLE ${quoteIdentifier(table.name)} MODIFY ${quoteIdentifier(table.column)} ${table.columnType} ${nullability}${comment}`;
}

function insertStatementFor(table: LegacyTable): string {
  const columns = [table.column, ...table.otherColumns];
  return `INSERT INTO ${quoteIdentifier(table.name)} (${columns.map(quoteIdentifier).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`;
}

/** The share of tickets the backends issue: each takes one residue class of the increment. */
export function share(fleet: NextSteps['fleet']): number {
  return fleet === undefined || BigInt(fleet.backends) >= fleet.increment
    ? 1
    : fleet.backends / Number(fleet.increment);
}

/** The IDs above startAfter; with backends that issue only some of the tickets, the share they can reach too. */
function idsLeft(range: bigint, fleet: NextSteps['fleet']): string {
  if (fleet === undefined || share(fleet) === 1) return String(range);
  const reachable = (range * BigInt(fleet.backends)) / fleet.increment;
  return `${range}, of which the ${fleet.backends} backends reach about ${reachable} (${fleet.backends} of every ${fleet.increment} tickets at auto_increment_increment=${fleet.increment})`;
}

/** What the printed next steps need besides the plan. */
export interface NextSteps {
  /** ` --source '…'` as the commands should repeat it, or '' when TICKETD_SOURCE gave it. */
  readonly sourceArgument: string;
  /** The sequence as the backends already hold it (apply has run), if they do. */
  readonly existing?: SequenceSettings | undefined;
  /** How many backends there are and their increment, when backends are configured: they issue that share of the tickets. */
  readonly fleet?: { readonly backends: number; readonly increment: bigint } | undefined;
}

/** The plan as the lines `migrate plan` prints. */
export function formatPlan(plan: MigrationPlan, next: NextSteps): string[] {
  const { table, settings } = plan;
  const growth = table.growth;
  const row = (label: string, value: string): string => `${`${label}:`.padEnd(16)}${value}`;
  const head = [
    row(
      'table',
      `${table.name}, column ${table.column} ${table.columnType}${table.hasAutoIncrement ? ' AUTO_INCREMENT' : ''}`,
    ),
    row('column max', `${table.maxId} (largest value of ${table.columnType})`),
    row(`MAX(${table.column})`, String(table.maxExisting)),
    row('AUTO_INCREMENT', table.autoIncrement === undefined ? 'none' : String(table.autoIncrement)),
    row(
      'growth',
      growth === undefined
        ? `unknown (${table.timestampColumn === undefined ? 'no DATETIME or TIMESTAMP column' : `${table.timestampColumn} spans no time in the latest rows`})`
        : `${formatRate(growth.idsPerSecond)} IDs/s over the latest ${growth.rows} rows (${growth.from} to ${growth.to}, by ${table.timestampColumn})`,
    ),
  ];
  const common = `${next.sourceArgument} --table ${table.name} --column ${table.column} --sequence ${settings.name}`;
  const verify = `npx ticketd migrate verify${common}`;
  const alter = table.hasAutoIncrement
    ? [
        'once no old version runs (nothing inserts without an ID), drop AUTO_INCREMENT (apply --alter runs this; nothing runs it otherwise):',
        `     ${plan.alterStatement}`,
      ]
    : [];
  const switchApp = [
    `roll out the app version that takes IDs from ticketd (sequence ${settings.name}) and passes them${table.hasAutoIncrement ? `; old instances keep inserting through AUTO_INCREMENT, above maxId, meanwhile` : ''}:`,
    `     ${plan.insertStatement}`,
  ];
  const during = table.hasAutoIncrement ? [`during the roll-out, at any time: ${verify}`] : [];
  const strict = [`${verify} --strict`];
  if (next.existing !== undefined) {
    const e = next.existing;
    return [
      ...head,
      row(
        'sequence',
        `${e.name} exists (blockSize=${e.blockSize} startAfter=${e.startAfter} maxId=${e.maxId} ids=${e.ids}): migrate apply has run`,
      ),
      '',
      'next:',
      ...numbered([switchApp, during, alter, strict]),
    ];
  }
  return [
    ...head,
    row('startAfter', `${settings.startAfter} = ${plan.legacyHigh} + headroom ${plan.headroom}`),
    row(
      'maxId',
      plan.legacyReserve === 0n
        ? `${settings.maxId} (the column's)`
        : `${settings.maxId} = column max - reserve ${plan.legacyReserve}`,
    ),
    ...(plan.legacyReserve === 0n
      ? []
      : [
          row(
            'reserve',
            `${settings.maxId + 1n} to ${table.maxId}: AUTO_INCREMENT moves to ${settings.maxId + 1n} at apply, for the old version${reserveLasts(plan)}`,
          ),
        ]),
    row('blockSize', String(settings.blockSize)),
    row('IDs left', idsLeft(settings.maxId - settings.startAfter, next.fleet)),
    row(
      'lasts',
      plan.lastsSeconds === undefined
        ? 'unknown (no growth rate)'
        : `${formatDuration(plan.lastsSeconds * share(next.fleet))} at that rate${growth !== undefined && plan.headroom > 0n ? `; the headroom covers ${formatDuration(Number(plan.headroom) / growth.idsPerSecond)} of inserts until apply` : ''}`,
    ),
    '',
    'next:',
    ...numbered([[`npx ticketd migrate apply${common} ${applyArguments(plan)}`], switchApp, during, alter, strict]),
  ];
}

/** The settings apply needs to make exactly this plan's sequence. */
export function applyArguments(plan: Pick<MigrationPlan, 'settings' | 'legacyReserve' | 'table'>): string {
  const s = plan.settings;
  const reserve = plan.table.hasAutoIncrement ? ` --legacy-reserve ${plan.legacyReserve}` : '';
  return `--block-size ${s.blockSize} --start-after ${s.startAfter}${reserve}${s.ids === 'ordered' ? '' : ` --ids ${s.ids}`}`;
}

/** How long the reserve lasts the old version at the growth rate seen: all it has after a rollback. */
function reserveLasts(plan: MigrationPlan): string {
  const rate = plan.table.growth?.idsPerSecond;
  return rate === undefined || rate <= 0
    ? ''
    : ` (${formatDuration(Number(plan.legacyReserve) / rate)} of inserts at that rate)`;
}

/** Steps as `  1. first line` with their further lines indented below; empty steps are left out. */
function numbered(steps: readonly (readonly string[])[]): string[] {
  return steps
    .filter((lines) => lines.length > 0)
    .flatMap(([first, ...rest], i) => [`  ${i + 1}. ${first}`, ...rest.map((line) => `  ${line}`)]);
}

function formatRate(perSecond: number): string {
  return perSecond >= 100 ? perSecond.toFixed(0) : perSecond.toPrecision(3);
}

/** A duration in the largest unit that keeps it readable. */
export function formatDuration(seconds: number): string {
  const units: [string, number][] = [
    ['years', 365.25 * 86400],
    ['days', 86400],
    ['hours', 3600],
    ['minutes', 60],
  ];
  for (const [unit, size] of units) if (seconds >= 2 * size) return `${(seconds / size).toFixed(1)} ${unit}`;
  return `${seconds.toFixed(1)} seconds`;
}
