import {
  isWithin,
  judgeConnection,
  largestIncrement,
  stripeProblem,
  type ServerSettings,
} from '../../src/core/stripes.js';

const s = (increment: bigint, offset: bigint) => ({ increment, offset });

describe('stripeProblem', () => {
  const pinnedA = new Map([['mysql://a:3306/t', s(2n, 1n)]]);

  it('accepts a distinct offset with the same increment', () => {
    expect(stripeProblem('mysql://b:3306/t', s(2n, 2n), pinnedA, 2)).toBeUndefined();
  });

  it('names both backends when offsets collide', () => {
    expect(stripeProblem('mysql://b:3306/t', s(2n, 1n), pinnedA, 2)).toBe(
      'backend mysql://b:3306/t has auto_increment_offset=1, same as mysql://a:3306/t',
    );
  });

  it("refuses a different increment whose class overlaps another backend's", () => {
    expect(stripeProblem('mysql://b:3306/t', s(3n, 2n), pinnedA, 2)).toBe(
      'backend mysql://b:3306/t has auto_increment_increment=3, auto_increment_offset=2, whose tickets overlap those of mysql://a:3306/t (2/1)',
    );
  });

  it('accepts a different increment while re-striping when the classes stay disjoint (4/2 beside 2/1)', () => {
    expect(stripeProblem('mysql://b:3306/t', s(4n, 2n), pinnedA, 2)).toBeUndefined();
    expect(stripeProblem('mysql://c:3306/t', s(4n, 3n), pinnedA, 3)).toMatch(
      /overlap those of mysql:\/\/a:3306\/t \(2\/1\)/,
    );
  });

  it('lets a pinned backend move into a narrower class inside its own, never a wider or another one', () => {
    expect(stripeProblem('mysql://a:3306/t', s(4n, 1n), pinnedA, 2)).toBeUndefined();
    expect(stripeProblem('mysql://a:3306/t', s(16n, 1n), pinnedA, 2)).toBeUndefined();
    expect(stripeProblem('mysql://a:3306/t', s(4n, 3n), pinnedA, 2)).toBeUndefined();
    expect(stripeProblem('mysql://a:3306/t', s(6n, 1n), new Map([['mysql://a:3306/t', s(4n, 1n)]]), 2)).toMatch(
      /now has auto_increment_increment=6, auto_increment_offset=1; it had 4\/1/,
    );
    expect(stripeProblem('mysql://a:3306/t', s(2n, 1n), new Map([['mysql://a:3306/t', s(4n, 1n)]]), 2)).toMatch(
      /it had 4\/1/,
    );
    expect(stripeProblem('mysql://a:3306/t', s(4n, 2n), pinnedA, 2)).toMatch(/it had 2\/1/);
  });

  it('largestIncrement: the widest step of any counter, 1 for none', () => {
    expect(largestIncrement([s(2n, 1n), s(16n, 2n), s(4n, 3n)])).toBe(16n);
    expect(largestIncrement([])).toBe(1n);
  });

  it('isWithin: residue and increment', () => {
    expect(isWithin(s(16n, 16n), s(2n, 2n))).toBe(true);
    expect(isWithin(s(16n, 2n), s(2n, 2n))).toBe(true);
    expect(isWithin(s(16n, 1n), s(2n, 2n))).toBe(false);
    expect(isWithin(s(3n, 1n), s(2n, 1n))).toBe(false);
  });

  it('refuses an offset above the increment, which MySQL would silently ignore', () => {
    expect(stripeProblem('mysql://b:3306/t', s(2n, 3n), new Map(), 2)).toMatch(/offset=3 > auto_increment_increment=2/);
  });

  it('refuses an increment smaller than the number of backends (the 1/1 of a server without its option file)', () => {
    expect(stripeProblem('mysql://b:3306/t', s(1n, 1n), new Map(), 2)).toMatch(
      /increment=1, smaller than the 2 backends/,
    );
  });

  it('refuses a backend whose settings changed since it was first seen', () => {
    expect(stripeProblem('mysql://a:3306/t', s(2n, 2n), pinnedA, 2)).toMatch(/now has .* it had 2\/1/);
  });

  it('treats offset == increment as residue 0, distinct from offset 1', () => {
    const pinned = new Map([['x', s(3n, 3n)]]);
    expect(stripeProblem('y', s(3n, 1n), pinned, 2)).toBeUndefined();
  });
});

describe('judgeConnection', () => {
  const settings = (over: Partial<ServerSettings> = {}): ServerSettings => ({
    increment: 2n,
    offset: 2n,
    flushLogAtTrxCommit: 1,
    syncBinlog: 1,
    logBin: true,
    galeraAutoIncrementControl: false,
    identity: 'id-b',
    ...over,
  });
  const context = {
    pinned: new Map([['mysql://a:3306/t', s(2n, 1n)]]),
    backendCount: 2,
    allowUnsafeDurability: false,
    knownIdentity: 'id-b',
  };

  it('passes a backend with its own class, durable settings and the identity it had', () => {
    expect(judgeConnection('mysql://b:3306/t', settings(), context)).toEqual({
      problem: undefined,
      warnings: [],
      identityChanged: false,
    });
  });

  it('names a stripe problem first, then a server problem', () => {
    expect(
      judgeConnection('mysql://b:3306/t', settings({ offset: 1n, flushLogAtTrxCommit: 0 }), context).problem,
    ).toMatch(/same as mysql:\/\/a/);
    expect(judgeConnection('mysql://b:3306/t', settings({ flushLogAtTrxCommit: 0 }), context).problem).toMatch(
      /innodb_flush_log_at_trx_commit=0/,
    );
  });

  it('turns unsafe durability into warnings when allowed', () => {
    const verdict = judgeConnection('mysql://b:3306/t', settings({ syncBinlog: 0 }), {
      ...context,
      allowUnsafeDurability: true,
    });
    expect(verdict.problem).toBeUndefined();
    expect(verdict.warnings).toHaveLength(1);
  });

  it('sees another server behind the address, but not a first answer', () => {
    expect(judgeConnection('mysql://b:3306/t', settings({ identity: 'id-c' }), context).identityChanged).toBe(true);
    expect(
      judgeConnection('mysql://b:3306/t', settings({ identity: 'id-c' }), { ...context, knownIdentity: undefined })
        .identityChanged,
    ).toBe(false);
  });
});
