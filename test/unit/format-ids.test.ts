import { randomBytes } from 'node:crypto';
import { firstId, idsAsJson, idsAsLines } from '../../src/http/format-ids.js';
import { quoteIds, writeUint64 } from '../../src/util/decimal.js';
import { MAX_UINT64 } from '../../src/core/blocks.js';

const text = (body: string | Buffer): string => (typeof body === 'string' ? body : body.toString('latin1'));

describe('ID formatting', () => {
  it('writes exact decimal strings on both sides of 2^53, from ranges and from opaque IDs', () => {
    const ranges = [
      { first: 9007199254740990n, last: 9007199254740991n },
      { first: 9007199254740992n, last: 9007199254740993n },
      { first: 4294967295n, last: 4294967296n },
      { first: MAX_UINT64, last: MAX_UINT64 },
    ];
    const expected = [
      '9007199254740990',
      '9007199254740991',
      '9007199254740992',
      '9007199254740993',
      '4294967295',
      '4294967296',
      '18446744073709551615',
    ];
    expect(JSON.parse(text(idsAsJson('s', ranges)))).toEqual({ sequence: 's', ids: expected });
    expect(JSON.parse(text(idsAsJson('s', BigUint64Array.from(expected.map(BigInt)))))).toEqual({
      sequence: 's',
      ids: expected,
    });
    expect(JSON.parse(text(idsAsJson('s', new BigUint64Array(0))))).toEqual({ sequence: 's', ids: [] });
    expect(text(idsAsLines([{ first: 1n, last: 3n }]))).toBe('1\n2\n3\n');
    expect(text(idsAsLines(BigUint64Array.from([1n, 10n ** 19n, MAX_UINT64])))).toBe(
      '1\n10000000000000000000\n18446744073709551615\n',
    );
  });

  it('copies IDs written ahead as JSON strings, also when a request spans two written batches', () => {
    const first = quoteIds(BigUint64Array.from([7n, MAX_UINT64, 10n ** 19n]));
    const second = quoteIds(BigUint64Array.from([42n, 1n]));
    expect(text(Buffer.from(first.bytes))).toBe('"7","18446744073709551615","10000000000000000000",');
    expect([...first.starts]).toEqual([0, 4, 27, 50]);
    // IDs 1..2 of the first batch and 0 of the second, as OpaqueIds hands them out: views of both.
    const run = {
      count: 3,
      parts: [
        first.bytes.subarray(first.starts[1], first.starts[3]),
        second.bytes.subarray(second.starts[0], second.starts[1]),
      ],
    };
    expect(text(idsAsJson('s', run))).toBe(
      '{"sequence":"s","ids":["18446744073709551615","10000000000000000000","42"]}',
    );
    expect(text(idsAsLines(run))).toBe('18446744073709551615\n10000000000000000000\n42\n');
    expect(firstId(run)).toBe('18446744073709551615');
    expect(firstId({ count: 1, parts: [second.bytes.subarray(second.starts[1], second.starts[2])] })).toBe('1');
  });

  it('writes every uint64 as BigInt would: powers of ten and two, their neighbours, and random values', () => {
    expect(
      text(
        idsAsJson('s', [
          { first: 0n, last: 12n },
          { first: 99n, last: 101n },
        ]),
      ),
    ).toBe('{"sequence":"s","ids":["0","1","2","3","4","5","6","7","8","9","10","11","12","99","100","101"]}');
    const values: bigint[] = [0n, MAX_UINT64];
    for (let e = 0n; e <= 19n; e++) values.push(10n ** e - 1n, 10n ** e, 10n ** e + 1n);
    for (let e = 0n; e < 64n; e++) values.push((1n << e) - 1n, 1n << e, (1n << e) + 1n);
    for (let i = 0; i < 20_000; i++) values.push(randomBytes(8).readBigUInt64LE() >> BigInt(i % 64));
    // Next to multiples of the limbs (10^4, 10^6, 10^8, 10^16), where a quotient off by one would show.
    for (let i = 0; i < 2_000; i++) {
      const d = [10n ** 4n, 10n ** 6n, 10n ** 8n, 10n ** 16n][i % 4]!;
      const m = (randomBytes(8).readBigUInt64LE() >> BigInt(i % 48)) / d;
      values.push(m * d - 1n, m * d, m * d + 1n);
    }
    const out = Buffer.alloc(32);
    for (const v of values.filter((x) => x >= 0n && x <= MAX_UINT64)) {
      const end = writeUint64(out, 0, Number(v >> 32n), Number(v & 0xffffffffn));
      expect(out.toString('latin1', 0, end)).toBe(v.toString());
    }
  });
});
