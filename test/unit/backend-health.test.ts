import { jest } from '@jest/globals';
import { BackendHealth, STATE_RECHECK_MS } from '../../src/allocator/backend-health.js';
import { Breaker } from '../../src/allocator/breaker.js';
import { BackendSlot } from '../../src/allocator/backend-slot.js';
import { GrantRefusals, REFUSAL_HOLD_MS } from '../../src/allocator/refusal.js';
import { usable } from '../../src/core/lane.js';
import type { Backend } from '../../src/backend/mysql/backend.js';
import { BackendAccessDeniedError, BackendMisconfiguredError } from '../../src/core/errors.js';
import { createLogger, silentLogger } from '../../src/logger.js';

/** A stand-in for a backend: only what the probe and the rechecks call. Its answers are switched by the test. */
function fakeBackend(): {
  backend: Backend;
  answers: { ok: boolean; denials: string[] };
  probes: () => number;
} {
  const answers = { ok: false, denials: [] as string[] };
  let probes = 0;
  const backend = {
    label: 'mysql://fake:3306/ticketd',
    settings: async () => {
      probes++;
      if (!answers.ok) throw new Error('connect ECONNREFUSED');
      return {};
    },
    servingDenials: () => Promise.resolve(answers.denials),
  } as unknown as Backend;
  return { backend, answers, probes: () => probes };
}

describe('backend health: breakers and background probes', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const setup = (logger = silentLogger) => {
    const fake = fakeBackend();
    const breaker = new Breaker(
      () => Date.now(),
      () => 0.5,
      { failureThreshold: 2, initialBackoffMs: 200, maxBackoffMs: 1000 },
    );
    const slot = new BackendSlot(fake.backend, breaker, new GrantRefusals(() => Date.now()));
    const health = new BackendHealth(logger, () => Date.now());
    return { ...fake, slot, health };
  };
  const logged = () => {
    const lines: { level: number; msg: string }[] = [];
    return {
      lines,
      logger: createLogger('info', {
        write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }),
      }),
    };
  };

  it('keeps probing an open backend until it answers, then marks it for a fresh rejoin', async () => {
    const { slot, health, answers, probes } = setup();
    slot.apply('default', { kind: 'checked' });
    expect(slot.lane('default').phase).toBe('serving');
    health.recordFailure(slot, new Error('timeout'));
    health.recordFailure(slot, new Error('timeout'));
    expect(slot.state).toBe('open');
    await jest.advanceTimersByTimeAsync(3000);
    expect(probes()).toBeGreaterThanOrEqual(2);
    expect(slot.state).toBe('open');
    answers.ok = true;
    await jest.advanceTimersByTimeAsync(1100);
    expect(slot.state).toBe('up');
    // After an outage its marks are reloaded before its tickets are used again.
    expect(slot.lane('default').phase).toBe('unchecked');
    health.close([slot]);
  });

  it('a probe timer that fires before the probe is due reschedules instead of ending the chain', async () => {
    const { slot, health, answers } = setup();
    health.recordFailure(slot, new Error('x'));
    health.recordFailure(slot, new Error('x'));
    // A failure elsewhere pushes this backend's backoff later after its timer was set.
    health.recordFailure(slot, new Error('x'));
    answers.ok = true;
    await jest.advanceTimersByTimeAsync(2000);
    expect(slot.state).toBe('up');
    health.close([slot]);
  });

  it('probes every open backend at once when a request finds none usable, at most every 100 ms', async () => {
    const { slot, health, probes } = setup();
    health.recordFailure(slot, new Error('x'));
    health.recordFailure(slot, new Error('x'));
    const before = probes();
    await health.probeIfNoneClosed([slot], (s) => usable(s.lane('default')));
    await health.probeIfNoneClosed([slot], (s) => usable(s.lane('default')));
    expect(probes()).toBe(before + 1);
    health.close([slot]);
  });

  it('a misconfigured backend is opened at once, whatever the failure count', () => {
    const { slot, health } = setup();
    health.recordFailure(slot, new BackendMisconfiguredError('offset 1 twice'));
    expect(slot.state).toBe('open');
    expect(slot.lastError).toBe('offset 1 twice');
    health.close([slot]);
  });

  it('logs one line when an outage starts and one when it ends, however many probes fail between', async () => {
    const { lines, logger } = logged();
    const { slot, health, ...fake } = setup(logger);
    fake.answers.ok = true;
    health.recordSuccess(slot);
    fake.answers.ok = false;
    health.recordFailure(slot, new Error('timeout'));
    health.recordFailure(slot, new Error('timeout'));
    await jest.advanceTimersByTimeAsync(5000);
    expect(fake.probes()).toBeGreaterThanOrEqual(4);
    fake.answers.ok = true;
    await jest.advanceTimersByTimeAsync(1100);
    expect(slot.state).toBe('up');
    expect(lines.map((l) => l.msg)).toEqual(['backend down', 'backend open', 'backend up']);
    health.close([slot]);
  });

  it('a missing privilege is the state refused, not an outage: the breaker stays closed, one log line, and it stands between the backend and readiness only while no fetch succeeds', async () => {
    const { lines, logger } = logged();
    const { slot, health, ...fake } = setup(logger);
    fake.answers.ok = true;
    health.recordSuccess(slot);
    slot.noteFetch('default', Date.now());
    await jest.advanceTimersByTimeAsync(10);
    const denied = new BackendAccessDeniedError(
      "backend mysql://fake:3306/ticketd: DELETE command denied to user 'tk'@'localhost' for table 'tickets_default'",
    );
    for (let i = 0; i < 5; i++) health.recordFailure(slot, denied);
    expect(slot.state).toBe('up');
    expect(slot.closed).toBe(true);
    expect(slot.status().state).toBe('refused');
    expect(slot.status().lastError).toMatch(/DELETE command denied/);
    expect(slot.issuing).toBe(false);
    expect(lines.map((l) => l.msg)).toEqual([
      'backend refused: missing privilege (docs/operating.md, "Accounts and GRANTs"; npx ticketd check names each)',
    ]);
    await jest.advanceTimersByTimeAsync(10);
    slot.noteFetch('default', Date.now());
    expect(slot.issuing).toBe(true);
    expect(slot.status().state).toBe('refused');
    await jest.advanceTimersByTimeAsync(REFUSAL_HOLD_MS + 1);
    expect(slot.status().state).toBe('up');
    expect(slot.status().lastError).toBeUndefined();
    health.close([slot]);
  });
  it("a backend left 'down' by its last call is asked again with no request: up within STATE_RECHECK_MS once it answers", async () => {
    const { slot, health, answers, probes } = setup();
    answers.ok = true;
    health.recordSuccess(slot);
    health.recordFailure(slot, new Error('timeout'));
    expect(slot.state).toBe('down');
    expect(slot.status().failing).toBe(true);
    const before = probes();
    await jest.advanceTimersByTimeAsync(STATE_RECHECK_MS + 1);
    expect(probes()).toBe(before + 1);
    expect(slot.state).toBe('up');
    expect(slot.status().failing).toBe(false);
    health.close([slot]);
  });

  it('a refused backend is asked again: refused for as long as its account lacks a privilege, up within STATE_RECHECK_MS of the GRANT', async () => {
    const { slot, health, answers } = setup();
    answers.ok = true;
    answers.denials = ['INSERT and DELETE (REPLACE INTO the ticket tables): DELETE command denied'];
    health.recordSuccess(slot);
    const denied = new BackendAccessDeniedError('backend mysql://fake:3306/ticketd: DELETE command denied');
    health.recordFailure(slot, denied);
    const refusedAt = slot.status().lastErrorAt;
    expect(refusedAt).toBeDefined();
    // Past the hold with no request at all: the rechecks still find the privilege missing.
    await jest.advanceTimersByTimeAsync(REFUSAL_HOLD_MS + 5 * STATE_RECHECK_MS);
    expect(slot.status().state).toBe('refused');
    expect(slot.status().failing).toBe(true);
    // The error's time is that of the refusal as last seen, not of an older breaker error.
    expect(Date.parse(slot.status().lastErrorAt!)).toBeGreaterThan(Date.parse(refusedAt!));
    answers.denials = [];
    await jest.advanceTimersByTimeAsync(STATE_RECHECK_MS + 1);
    expect(slot.status().state).toBe('up');
    expect(slot.status().failing).toBe(false);
    health.close([slot]);
  });
});
