import { idsAsJsonList, idsAsLines } from '../../src/http/format-ids.js';
import { MAX_UINT64 } from '../../src/core/blocks.js';

describe('ID formatting', () => {
  it('writes exact decimal strings on both sides of 2^53', () => {
    const ranges = [
      { first: 9007199254740990n, last: 9007199254740991n },
      { first: 9007199254740992n, last: 9007199254740993n },
      { first: MAX_UINT64, last: MAX_UINT64 },
    ];
    expect(JSON.parse(`[${idsAsJsonList(ranges)}]`)).toEqual([
      '9007199254740990',
      '9007199254740991',
      '9007199254740992',
      '9007199254740993',
      '18446744073709551615',
    ]);
    expect(idsAsLines([{ first: 1n, last: 3n }])).toBe('1\n2\n3\n');
  });
});
