import { backendNames } from '../../src/http/backend-names.js';
import { processTotals } from '../../src/http/process-totals.js';

describe('backends as a client without the admin token reads them', () => {
  const names = backendNames([
    'mysql://db-a.internal:3306/ticketd',
    'mysql://db-a.internal:33060/ticketd',
    'mysql://10.0.0.7:3306/tickets',
  ]);

  it('names each backend by its letter, and an unknown one by none', () => {
    expect(
      [
        'mysql://db-a.internal:3306/ticketd',
        'mysql://db-a.internal:33060/ticketd',
        'mysql://10.0.0.7:3306/tickets',
        'mysql://other:1/x',
      ].map((label) => names.nameOf(label)),
    ).toEqual(['A', 'B', 'C', '?']);
  });

  it('replaces addresses, with or without an account, and host:port, never a longer port by a shorter one', () => {
    expect(
      names.scrub(
        'backend mysql://db-a.internal:3306/ticketd is down; mysql://app@db-a.internal:33060/ticketd: connect ECONNREFUSED 10.0.0.7:3306',
      ),
    ).toBe('backend A is down; backend B: connect ECONNREFUSED backend C');
    expect(names.scrub('ticket 3306 of sequence s')).toBe('ticket 3306 of sequence s');
  });
});

describe('the whole process figures for the status page', () => {
  it('adds up the samples of every worker, per sequence', () => {
    const text = [
      '# HELP ticketd_ids_issued_total x',
      'ticketd_ids_issued_total{sequence="a"} 9',
      'ticketd_ids_issued_total{sequence="a"} 4',
      'ticketd_cached_ids{sequence="a"} 100',
      'ticketd_ids_issued_total{sequence="b"} 1',
    ].join('\n');
    const totals = processTotals(text);
    expect([...totals.issued]).toEqual([
      ['a', 13],
      ['b', 1],
    ]);
    expect([...totals.cached]).toEqual([['a', 100]]);
  });
});
