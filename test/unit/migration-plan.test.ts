import { maxValueOfColumn } from '../../src/backend/mysql/column-types.js';
import type { LegacyTable } from '../../src/backend/mysql/legacy-table.js';
import { formatDuration, formatPlan, planMigration } from '../../src/migrate/plan.js';
import { MigrationRefusedError } from '../../src/core/errors.js';

const table = (over: Partial<LegacyTable> = {}): LegacyTable => ({
  name: 'orders',
  column: 'id',
  columnType: 'int(11)',
  maxId: 2147483647n,
  nullable: false,
  comment: '',
  hasAutoIncrement: true,
  maxExisting: 5000n,
  autoIncrement: 5200n,
  otherColumns: ['customer'],
  timestampColumn: 'created_at',
  growth: { idsPerSecond: 10, rows: 100, from: 'a', to: 'b' },
  ...over,
});

describe('column types', () => {
  it.each([
    ['tinyint', false, 127n],
    ['tinyint', true, 255n],
    ['smallint', false, 32767n],
    ['mediumint', true, 16777215n],
    ['int', false, 2147483647n],
    ['int', true, 4294967295n],
    ['bigint', false, 9223372036854775807n],
    ['BIGINT', true, 18446744073709551615n],
  ])('%s unsigned=%s holds at most %s', (type, unsigned, max) => {
    expect(maxValueOfColumn(type, unsigned)).toBe(max);
  });

  it('knows no maximum for a column that is not an integer', () => {
    expect(maxValueOfColumn('varchar', false)).toBeUndefined();
    expect(maxValueOfColumn('decimal', false)).toBeUndefined();
  });
});

describe('a migration plan', () => {
  it('starts after the larger of MAX(id) and AUTO_INCREMENT, plus headroom', () => {
    expect(planMigration(table(), { sequence: 'orders' }).settings.startAfter).toBe(15_200n);
    expect(planMigration(table({ autoIncrement: 10n }), { sequence: 'orders', headroom: 0n }).settings.startAfter).toBe(
      5000n,
    );
  });

  it('uses small blocks for 32-bit columns and the default block size for wider ones', () => {
    expect(planMigration(table(), { sequence: 'orders' }).settings.blockSize).toBe(100n);
    expect(planMigration(table({ maxId: 4294967295n }), { sequence: 'orders' }).settings.blockSize).toBe(100n);
    expect(planMigration(table({ maxId: 9223372036854775807n }), { sequence: 'orders' }).settings.blockSize).toBe(
      10_000n,
    );
  });

  it('says how much of the range backends that issue a share of the tickets reach, and how long that lasts', () => {
    const plan = planMigration(table(), { sequence: 'orders' });
    const left = plan.settings.maxId - plan.settings.startAfter;
    const at16 = formatPlan(plan, { sourceArgument: '', fleet: { backends: 2, increment: 16n } });
    expect(at16).toContain(
      `IDs left:       ${left}, of which the 2 backends reach about ${(left * 2n) / 16n} (2 of every 16 tickets at auto_increment_increment=16)`,
    );
    expect(at16).toContain(
      `lasts:          ${formatDuration((plan.lastsSeconds! * 2) / 16)} at that rate; the headroom covers ${formatDuration(10000 / 10)} of inserts until apply`,
    );
    const at2 = formatPlan(plan, { sourceArgument: '', fleet: { backends: 2, increment: 2n } });
    expect(at2).toEqual(formatPlan(plan, { sourceArgument: '' }));
  });

  it('projects how long the sequence lasts from the observed rate, and says unknown without one', () => {
    const reserve = (2147483647n - 15200n) / 16n;
    expect(planMigration(table(), { sequence: 'orders' }).lastsSeconds).toBeCloseTo(
      Number(2147483647n - reserve - 15200n) / 10,
    );
    const unknown = planMigration(table({ growth: undefined }), { sequence: 'orders' });
    expect(unknown.lastsSeconds).toBeUndefined();
    expect(formatPlan(unknown, { sourceArgument: '' })).toContain('lasts:          unknown (no growth rate)');
  });

  it('refuses a column with no room left above the legacy IDs', () => {
    expect(() =>
      planMigration(table({ maxExisting: 2147480000n, autoIncrement: 2147480001n }), { sequence: 'orders' }),
    ).toThrow(MigrationRefusedError);
    expect(() => planMigration(table(), { sequence: 'orders', blockSize: 0n })).toThrow(/--block-size must be from 1/);
  });

  it('prints an ALTER that keeps the column definition except AUTO_INCREMENT, with names quoted', () => {
    const plan = planMigration(table({ name: 'we`ird', comment: "it's" }), { sequence: 'orders' });
    expect(plan.alterStatement).toBe("ALTER TABLE `we``ird` MODIFY `id` int(11) NOT NULL COMMENT 'it''s'");
    expect(plan.insertStatement).toBe('INSERT INTO `we``ird` (`id`, `customer`) VALUES (?, ?)');
  });

  it('prints next steps that run as printed, and once the sequence exists only what is left', () => {
    const plan = planMigration(table(), { sequence: 'orders' });
    const steps = formatPlan(plan, { sourceArgument: " --source 'mysql://app@db:3306/shop'" });
    expect(steps.slice(steps.indexOf('next:'))).toEqual([
      'next:',
      `  1. npx ticketd migrate apply --source 'mysql://app@db:3306/shop' --table orders --column id --sequence orders --block-size 100 --start-after 15200 --legacy-reserve ${plan.legacyReserve}`,
      '  2. roll out the app version that takes IDs from ticketd (sequence orders) and passes them; old instances keep inserting through AUTO_INCREMENT, above maxId, meanwhile:',
      '       INSERT INTO `orders` (`id`, `customer`) VALUES (?, ?)',
      "  3. during the roll-out, at any time: npx ticketd migrate verify --source 'mysql://app@db:3306/shop' --table orders --column id --sequence orders",
      '  4. once no old version runs (nothing inserts without an ID), drop AUTO_INCREMENT (apply --alter runs this; nothing runs it otherwise):',
      '       ALTER TABLE `orders` MODIFY `id` int(11) NOT NULL',
      "  5. npx ticketd migrate verify --source 'mysql://app@db:3306/shop' --table orders --column id --sequence orders --strict",
    ]);
    expect(steps).toContain(
      `maxId:          ${2147483647n - plan.legacyReserve} = column max - reserve ${plan.legacyReserve}`,
    );
    expect(steps).toContain(
      `reserve:        ${2147483648n - plan.legacyReserve} to 2147483647: AUTO_INCREMENT moves to ${2147483648n - plan.legacyReserve} at apply, for the old version (155.3 days of inserts at that rate)`,
    );
    const existing = { ...plan.settings, startAfter: 9000n };
    const after = formatPlan(planMigration(table({ hasAutoIncrement: false }), { sequence: 'orders' }), {
      sourceArgument: '',
      existing,
    });
    expect(after).toContain(
      `sequence:       orders exists (blockSize=100 startAfter=9000 maxId=${plan.settings.maxId} ids=ordered): migrate apply has run`,
    );
    expect(after.slice(after.indexOf('next:'))).toEqual([
      'next:',
      '  1. roll out the app version that takes IDs from ticketd (sequence orders) and passes them:',
      '       INSERT INTO `orders` (`id`, `customer`) VALUES (?, ?)',
      '  2. npx ticketd migrate verify --table orders --column id --sequence orders --strict',
    ]);
  });

  it('keeps a reserve above the sequence for AUTO_INCREMENT only while the table has it: 1/16 of the free range by default, or as asked', () => {
    const plan = planMigration(table(), { sequence: 'orders' });
    expect(plan.legacyReserve).toBe((2147483647n - 15200n) / 16n);
    expect(plan.settings.maxId).toBe(2147483647n - plan.legacyReserve);
    expect(
      planMigration(table({ hasAutoIncrement: false, autoIncrement: undefined }), { sequence: 'orders' }).settings
        .maxId,
    ).toBe(2147483647n);
    expect(planMigration(table(), { sequence: 'orders', legacyReserve: 1_000_000n }).settings.maxId).toBe(2146483647n);
    expect(planMigration(table(), { sequence: 'orders', legacyReserve: 0n }).settings.maxId).toBe(2147483647n);
    // Unsigned BIGINT: exact above 2^64 / 16.
    const big = planMigration(table({ maxId: 18446744073709551615n }), { sequence: 'orders' });
    expect(big.settings.maxId).toBe(18446744073709551615n - (18446744073709551615n - 15200n) / 16n);
    expect(() => planMigration(table(), { sequence: 'orders', legacyReserve: 2147483647n - 15200n })).toThrow(
      /--legacy-reserve 2147468447 leaves no IDs between startAfter 15200/,
    );
  });

  it('formats durations in a readable unit', () => {
    expect(formatDuration(30)).toBe('30.0 seconds');
    expect(formatDuration(7200)).toBe('2.0 hours');
    expect(formatDuration(86400 * 365.25 * 3)).toBe('3.0 years');
  });
});
