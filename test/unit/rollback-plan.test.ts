import { formatRollback, highestIdEverIssued, planRollback } from '../../src/migrate/rollback.js';
import type { SequenceSettings } from '../../src/core/sequence.js';
import type { LegacyTable } from '../../src/backend/mysql/legacy-table.js';

/** Where AUTO_INCREMENT goes when a migration is taken back (src/migrate/rollback.ts), and when it must not. */
const orders: SequenceSettings = Object.freeze({
  name: 'orders',
  blockSize: 100n,
  startAfter: 11_000n,
  maxId: 2_147_483_647n,
  ids: 'ordered',
  retired: true,
});
const table: LegacyTable = {
  name: 'orders',
  column: 'id',
  columnType: 'int(11)',
  maxId: 2_147_483_647n,
  nullable: false,
  comment: '',
  hasAutoIncrement: false,
  maxExisting: 20_000n,
  autoIncrement: undefined,
  otherColumns: ['customer'],
  timestampColumn: undefined,
  growth: undefined,
};

describe('rollback plan', () => {
  it('puts AUTO_INCREMENT past the last ID of the highest ticket taken, clipped to maxId', () => {
    expect(highestIdEverIssued(orders, 0n)).toBe(11_000n);
    expect(highestIdEverIssued(orders, 110n)).toBe(11_099n);
    expect(highestIdEverIssued(orders, 500n)).toBe(50_099n);
    expect(highestIdEverIssued({ ...orders, maxId: 50_050n }, 500n)).toBe(50_050n);
    // A ticket past maxId: an earlier one may have reached maxId itself.
    expect(highestIdEverIssued({ ...orders, maxId: 50_050n }, 900n)).toBe(50_050n);
    expect(highestIdEverIssued(orders, 100n)).toBe(11_000n);
  });

  it('gives back the column AUTO_INCREMENT that apply --alter dropped, or only moves it', () => {
    const plan = planRollback(orders, 500n, table, []);
    expect(plan).toMatchObject({ highestId: 50_099n, nextAutoIncrement: 50_100n, refusal: undefined });
    expect(plan.statement).toBe(
      'ALTER TABLE `orders` MODIFY `id` int(11) NOT NULL AUTO_INCREMENT, AUTO_INCREMENT = 50100',
    );
    expect(planRollback(orders, 500n, { ...table, hasAutoIncrement: true }, []).statement).toBe(
      'ALTER TABLE `orders` AUTO_INCREMENT = 50100',
    );
    expect(formatRollback(plan, false)).toContain(
      'would run: ALTER TABLE `orders` MODIFY `id` int(11) NOT NULL AUTO_INCREMENT, AUTO_INCREMENT = 50100',
    );
  });

  it("with a reserve above maxId, keeps AUTO_INCREMENT there: the counter is never pulled back into ticketd's range", () => {
    const cut = { ...orders, maxId: 2_000_000_000n };
    const withCounter = { ...table, hasAutoIncrement: true, autoIncrement: 2_000_000_123n };
    const plan = planRollback(cut, 500n, withCounter, []);
    expect([plan.highestId, plan.nextAutoIncrement, plan.done, plan.refusal]).toEqual([
      50_099n,
      2_000_000_001n,
      true,
      undefined,
    ]);
    // apply --alter took AUTO_INCREMENT away: it comes back above maxId.
    expect(planRollback(cut, 500n, table, []).statement).toBe(
      'ALTER TABLE `orders` MODIFY `id` int(11) NOT NULL AUTO_INCREMENT, AUTO_INCREMENT = 2000000001',
    );
    expect(planRollback(cut, 500n, table, [60_000n]).refusal).toMatch(
      /rows above 50099, .*could have issued \(60000\)/,
    );
  });

  it('refuses while the sequence is not retired, and names the command that retires it', () => {
    const { retired: _retired, ...live } = orders;
    expect(planRollback(live, 500n, table, []).refusal).toMatch(/not retired.*npx ticketd sequences retire orders/);
  });

  it('says a rollback is done when AUTO_INCREMENT is already above every issued ID, whatever rows the application added since', () => {
    const after = planRollback(orders, 500n, { ...table, hasAutoIncrement: true, autoIncrement: 50_400n }, [50_100n]);
    expect([after.done, after.refusal]).toEqual([true, undefined]);
    expect(formatRollback(after, false).at(-1)).toMatch(/^done already/);
    expect(planRollback(orders, 500n, { ...table, hasAutoIncrement: true, autoIncrement: 50_000n }, []).done).toBe(
      false,
    );
  });

  it('refuses rows above the highest issued ID: something else wrote there', () => {
    expect(planRollback(orders, 500n, table, [60_000n]).refusal).toMatch(
      /rows above 50099, .*could have issued \(60000\)/,
    );
  });

  it('for an opaque sequence goes above maxId, and refuses when the column cannot hold that', () => {
    const opaque: SequenceSettings = { ...orders, ids: 'opaque', startAfter: 0n };
    expect(highestIdEverIssued(opaque, 1n)).toBe(2_147_483_647n);
    expect(planRollback(opaque, 1n, table, []).refusal).toMatch(
      /opaque: any ID of its domain .*past what orders.id \(int\(11\)\) holds/,
    );
    expect(
      planRollback(opaque, 1n, { ...table, maxId: 9_223_372_036_854_775_807n, columnType: 'bigint(20)' }, []).refusal,
    ).toBeUndefined();
  });
});
