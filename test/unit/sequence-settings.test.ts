import {
  assertSequenceName,
  parseSequenceSettings,
  parseUnsigned,
  sameSettings,
  settleDefaultMaxId,
  withKey,
} from '../../src/core/sequence.js';
import { DEFAULT_MAX_ID, MAX_UINT64 } from '../../src/core/blocks.js';
import { BadRequestError } from '../../src/core/errors.js';

describe('sequence names and settings', () => {
  it('accepts names of the pattern and refuses the rest before any SQL', () => {
    expect(() => assertSequenceName('orders_2')).not.toThrow();
    expect(() => assertSequenceName('a'.repeat(48))).not.toThrow();
    for (const bad of ['Bad', 'a;drop', 'a'.repeat(49), '', '1a', 'a-b', 'a`b']) {
      expect(() => assertSequenceName(bad)).toThrow(BadRequestError);
    }
  });

  it('defaults startAfter to 0 and maxId to 2^63 − 1 (a signed BIGINT), and says the maxId was not given', () => {
    expect(DEFAULT_MAX_ID).toBe(9223372036854775807n);
    expect(parseSequenceSettings('s', { blockSize: 100 })).toEqual({
      name: 's',
      blockSize: 100n,
      startAfter: 0n,
      maxId: DEFAULT_MAX_ID,
      ids: 'ordered',
      maxIdDefaulted: true,
    });
    expect(parseSequenceSettings('s', { blockSize: 100, ids: 'opaque' }).maxId).toBe(DEFAULT_MAX_ID);
    expect(parseSequenceSettings('s', { blockSize: 100, maxId: String(MAX_UINT64) })).toEqual({
      name: 's',
      blockSize: 100n,
      startAfter: 0n,
      maxId: MAX_UINT64,
      ids: 'ordered',
    });
  });

  it('a request without maxId keeps an existing sequence of the old default (2^64 − 1), and nothing else', () => {
    const asked = parseSequenceSettings('s', { blockSize: 100, ids: 'opaque' });
    const old = parseSequenceSettings('s', { blockSize: 100, ids: 'opaque', maxId: String(MAX_UINT64) });
    expect(settleDefaultMaxId(asked, [])).toEqual({
      name: 's',
      blockSize: 100n,
      startAfter: 0n,
      maxId: DEFAULT_MAX_ID,
      ids: 'opaque',
    });
    expect(settleDefaultMaxId(asked, [old]).maxId).toBe(MAX_UINT64);
    // Another block size is another sequence: the request keeps its default, and creating it conflicts.
    expect(settleDefaultMaxId(asked, [{ ...old, blockSize: 5n }]).maxId).toBe(DEFAULT_MAX_ID);
    expect(settleDefaultMaxId(asked, [{ ...old, maxId: 1_000_000_000n }]).maxId).toBe(DEFAULT_MAX_ID);
    // An explicit maxId is what was asked, whatever exists.
    expect(settleDefaultMaxId(parseSequenceSettings('s', { blockSize: 100, maxId: '5000000' }), [old]).maxId).toBe(
      5_000_000n,
    );
  });

  it('takes large values as decimal strings and refuses inexact numbers', () => {
    expect(parseUnsigned('18446744073709551615', 'maxId')).toBe(MAX_UINT64);
    expect(() => parseUnsigned('18446744073709551616', 'maxId')).toThrow(/maxId must be an integer from 0/);
    expect(() => parseUnsigned(2 ** 60, 'startAfter')).toThrow(/below 2\^53/);
    expect(() => parseUnsigned(-1, 'startAfter')).toThrow(BadRequestError);
  });

  it('refuses missing or bad block sizes, unknown fields, and maxId ≤ startAfter', () => {
    expect(() => parseSequenceSettings('s', {})).toThrow(/blockSize is required/);
    expect(() => parseSequenceSettings('s', { blockSize: 0 })).toThrow(
      /blockSize must be an integer from 1 to 1000000000; got 0/,
    );
    expect(() => parseSequenceSettings('s', { blockSize: 1, extra: 1 })).toThrow(/unknown field\(s\) extra/);
    expect(() => parseSequenceSettings('s', { blockSize: 1, startAfter: 10, maxId: 10 })).toThrow(
      /maxId \(10\) must be greater/,
    );
    expect(() => parseSequenceSettings('s', [1])).toThrow(/JSON object/);
  });

  test('ids is "ordered" by default, "opaque" on request, and opaque needs a domain of a million IDs', () => {
    expect(parseSequenceSettings('s', { blockSize: 1, ids: 'opaque' }).ids).toBe('opaque');
    expect(() => parseSequenceSettings('s', { blockSize: 1, ids: 'random' })).toThrow(
      /ids must be "ordered", "opaque" or "strict"; got "random"/,
    );
    expect(() => parseSequenceSettings('s', { blockSize: 1, ids: 'opaque', startAfter: 0, maxId: 999_999 })).toThrow(
      /at least 1000000 IDs/,
    );
    expect(parseSequenceSettings('s', { blockSize: 1, ids: 'opaque', startAfter: 0, maxId: 1_000_000 }).maxId).toBe(
      1_000_000n,
    );
  });

  test('a key travels with the settings but never into JSON, a spread or a comparison of the rest', () => {
    const key = new Uint8Array(32).fill(7);
    const settings = withKey(parseSequenceSettings('s', { blockSize: 1, ids: 'opaque' }), key, 'feistel-aes256-v2');
    expect(settings.key).toBe(key);
    expect(JSON.stringify(settings, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toContain('key');
    expect(Object.keys(settings)).not.toContain('key');
    expect({ ...settings }).not.toHaveProperty('key');
    expect(sameSettings(settings, parseSequenceSettings('s', { blockSize: 1, ids: 'opaque' }))).toBe(true);
    expect(sameSettings(settings, withKey(settings, new Uint8Array(32).fill(8), 'feistel-aes256-v2'))).toBe(false);
    expect(sameSettings(settings, parseSequenceSettings('s', { blockSize: 1 }))).toBe(false);
  });

  test('attaching a key keeps what the row says of the sequence: retired, and the version it needs', () => {
    const row = {
      ...parseSequenceSettings('s', { blockSize: 1, ids: 'opaque' }),
      needsVersion: '0.8.0',
      retired: true as const,
    };
    const keyed = withKey(row, new Uint8Array(32).fill(7), 'feistel-aes256-v2');
    expect(keyed.retired).toBe(true);
    expect(keyed.needsVersion).toBe('0.8.0');
    expect(keyed.key).toBeDefined();
    expect(Object.isFrozen(keyed)).toBe(true);
  });
});
