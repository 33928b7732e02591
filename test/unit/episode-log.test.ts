import { jest } from '@jest/globals';
import { EpisodeLog } from '../../src/util/episode-log.js';
import { createLogger } from '../../src/logger.js';

/** A fault repeated per request is one line when it starts and one with its count when it ends. */
describe('EpisodeLog', () => {
  function capture(): { lines: Record<string, unknown>[]; log: EpisodeLog } {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger('info', {
      write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
    });
    return { lines, log: new EpisodeLog(logger, { quietMs: 40 }) };
  }
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

  it('logs the first of 1,000 repeats, then one line with the count once they stop', async () => {
    const { lines, log } = capture();
    for (let i = 0; i < 1000; i++)
      log.note('prefetch default', { sequence: 'default' }, 'prefetch of sequence default failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      episode: 'start',
      sequence: 'default',
      msg: 'prefetch of sequence default failed',
    });
    await sleep(120);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ episode: 'end', count: 1000, sequence: 'default' });
    expect(String(lines[1]!.msg)).toContain('1000 times');
  });

  it('keeps an episode open while repeats come closer than the quiet time, and starts a new one after', () => {
    // Fake timers: on a loaded machine a real 15 ms sleep can outlast the 40 ms quiet time.
    jest.useFakeTimers();
    try {
      episodesAcrossAQuietTime();
    } finally {
      jest.useRealTimers();
    }
  });

  function episodesAcrossAQuietTime(): void {
    const { lines, log } = capture();
    for (let i = 0; i < 5; i++) {
      log.note('k', {}, 'fault');
      jest.advanceTimersByTime(15);
    }
    expect(lines).toHaveLength(1);
    jest.advanceTimersByTime(100);
    log.note('k', {}, 'fault');
    expect(lines.map((l) => l.episode)).toEqual(['start', 'end', 'start']);
    expect(lines[1]).toMatchObject({ count: 5 });
    log.close();
    expect(lines.map((l) => l.episode)).toEqual(['start', 'end', 'start', 'end']);
  }

  it('keeps episodes of different keys apart', () => {
    const { lines, log } = capture();
    log.note('a', {}, 'fault a');
    log.note('b', {}, 'fault b');
    log.note('a', {}, 'fault a');
    expect(lines.map((l) => l.msg)).toEqual(['fault a', 'fault b']);
    log.close();
    expect(lines.filter((l) => l.episode === 'end').map((l) => l.count)).toEqual([2, 1]);
  });
});
