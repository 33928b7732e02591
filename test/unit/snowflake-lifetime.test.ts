import { DEFAULT_SNOWFLAKE_EPOCH_MS, timeBitsFor, timeField } from '../../src/core/snowflake-lifetime.js';

describe('the lifetime of a Snowflake time field', () => {
  const defaults = { epochMs: DEFAULT_SNOWFLAKE_EPOCH_MS, timeBits: undefined };

  it("ends 2^41 ms after 2024-01-01 in the clients' default layout: 2093-09-06T15:47:35.552Z", () => {
    const now = Date.parse('2026-12-07T00:00:00Z');
    const field = timeField(10, defaults, now);
    expect(field.timeBits).toBe(41);
    expect(new Date(field.endsMs).toISOString()).toBe('2093-09-06T15:47:35.552Z');
    expect(field.secondsLeft).toBe(Math.floor((field.endsMs - now) / 1000));
  });

  it('takes the bits a pool wider than 10 worker bits needs out of the time field, unless the operator says', () => {
    expect(timeBitsFor(8, undefined)).toBe(41);
    expect(timeBitsFor(12, undefined)).toBe(39);
    expect(timeBitsFor(16, undefined)).toBe(35);
    expect(timeBitsFor(16, 41)).toBe(41);
  });

  it('runs out in about 1.09 years with 35 time bits, and says 0 once past', () => {
    const field = timeField(16, defaults, DEFAULT_SNOWFLAKE_EPOCH_MS);
    expect(field.secondsLeft).toBe(Math.floor(2 ** 35 / 1000));
    expect(field.secondsLeft / (365.25 * 86_400)).toBeCloseTo(1.089, 3);
    expect(timeField(16, defaults, DEFAULT_SNOWFLAKE_EPOCH_MS + 2 ** 35).secondsLeft).toBe(0);
    expect(timeField(16, defaults, DEFAULT_SNOWFLAKE_EPOCH_MS + 2 ** 36).secondsLeft).toBe(0);
  });

  it('counts from the epoch the operator gives', () => {
    const epochMs = Date.parse('2015-01-01T00:00:00Z');
    const field = timeField(10, { epochMs, timeBits: 38 }, Date.parse('2020-01-01T00:00:00Z'));
    expect(new Date(field.endsMs).toISOString()).toBe(new Date(epochMs + 2 ** 38).toISOString());
    expect(field.timeBits).toBe(38);
  });
});
