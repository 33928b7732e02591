import { Breaker } from '../../src/allocator/breaker.js';

function breaker() {
  let now = 1000;
  const b = new Breaker(
    () => now,
    () => 0.5,
    { failureThreshold: 2, initialBackoffMs: 200, maxBackoffMs: 1000 },
  );
  return { b, advance: (ms: number) => (now += ms) };
}

describe('Breaker', () => {
  it('stays closed after one failure and opens after the second in a row', () => {
    const { b } = breaker();
    b.recordFailure(new Error('timeout'));
    expect(b.state).toBe('down');
    expect(b.closed).toBe(true);
    b.recordFailure(new Error('timeout'));
    expect(b.state).toBe('open');
    expect(b.closed).toBe(false);
    expect(b.lastError).toBe('timeout');
  });

  it('a success in between resets the count', () => {
    const { b } = breaker();
    b.recordFailure('x');
    b.recordSuccess();
    b.recordFailure('x');
    expect(b.state).toBe('down');
  });

  it('allows a probe only after the jittered backoff, half-open while it runs', () => {
    const { b, advance } = breaker();
    b.trip('misconfigured');
    expect(b.probeInMs).toBe(150);
    expect(b.beginProbe()).toBe(false);
    advance(150);
    expect(b.beginProbe()).toBe(true);
    expect(b.state).toBe('half-open');
    expect(b.closed).toBe(false);
  });

  it('a failed probe reopens with a doubled backoff, capped; a good one closes', () => {
    const { b, advance } = breaker();
    b.trip('x');
    const backoffs: number[] = [];
    for (let i = 0; i < 5; i++) {
      backoffs.push(b.probeInMs);
      advance(b.probeInMs);
      b.beginProbe();
      b.recordFailure('still down');
    }
    expect(backoffs).toEqual([150, 300, 600, 750, 750]);
    advance(b.probeInMs);
    b.beginProbe();
    expect(b.recordSuccess()).toBe('half-open');
    expect(b.state).toBe('up');
  });

  it('a forced probe (demand while every backend is open) skips the backoff, but never runs twice', () => {
    const { b } = breaker();
    expect(b.beginProbe(true)).toBe(false);
    b.trip('down');
    expect(b.beginProbe()).toBe(false);
    expect(b.beginProbe(true)).toBe(true);
    expect(b.beginProbe(true)).toBe(false);
  });
});
