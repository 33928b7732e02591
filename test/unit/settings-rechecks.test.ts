/** The timer that reads each served sequence again (service/settings-rechecks.ts), asked for or not. */
import { SettingsRechecks } from '../../src/service/settings-rechecks.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('settings rechecks', () => {
  it('reads a watched sequence every everyMs from when the last read was sent, with no request, until it is no longer served', async () => {
    const reads: number[] = [];
    let served = true;
    const rechecks = new SettingsRechecks({
      everyMs: 40,
      clock: Date.now,
      recheck: async () => {
        reads.push(Date.now());
        return served;
      },
    });
    const watchedAt = Date.now();
    rechecks.watch('s', watchedAt);
    await sleep(250);
    expect(reads.length).toBeGreaterThanOrEqual(2);
    expect(reads[0]! - watchedAt).toBeGreaterThanOrEqual(39);
    served = false;
    await sleep(100);
    const after = reads.length;
    await sleep(100);
    expect(reads.length).toBe(after);
    rechecks.close();
  });

  it('counts from when the previous read was sent: a read sent long ago is repeated at once', async () => {
    const reads: string[] = [];
    const rechecks = new SettingsRechecks({
      everyMs: 5000,
      clock: Date.now,
      recheck: async (name) => (reads.push(name), false),
    });
    rechecks.watch('old', Date.now() - 6000);
    await sleep(20);
    expect(reads).toEqual(['old']);
    rechecks.close();
  });

  it('tries again on schedule after a read that failed, and stops for a forgotten sequence and on close', async () => {
    let calls = 0;
    const rechecks = new SettingsRechecks({
      everyMs: 20,
      clock: Date.now,
      recheck: async () => {
        calls++;
        throw new Error('no backend answered');
      },
    });
    rechecks.watch('a', Date.now());
    rechecks.watch('b', Date.now());
    rechecks.forget('b');
    await sleep(200);
    const beforeClose = calls;
    expect(beforeClose).toBeGreaterThanOrEqual(2);
    rechecks.close();
    rechecks.watch('c', Date.now());
    await sleep(80);
    expect(calls).toBe(beforeClose);
  });
});
