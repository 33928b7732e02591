import { readFileSync } from 'node:fs';
import {
  compareVersions,
  DECOY_SETTINGS,
  GATE_VERSION,
  gateFor,
  laterVersion,
  THIS_VERSION,
  understands,
} from '../../src/core/versions.js';
import { blockForTicket } from '../../src/core/blocks.js';

describe('versions', () => {
  it('THIS_VERSION is the version package.json and the client package ship', () => {
    for (const file of ['package.json', 'packages/client/package.json']) {
      expect((JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version).toBe(THIS_VERSION);
    }
  });

  it('compares by number, not by text', () => {
    expect(compareVersions('0.10.0', '0.9.9')).toBeGreaterThan(0);
    expect(compareVersions('0.6.0', '0.6.0')).toBe(0);
    expect(compareVersions('0.6.0-rc.1', '0.6.0')).toBe(0);
    expect(compareVersions('1.0.0', '0.99.99')).toBeGreaterThan(0);
    expect(compareVersions('0.5.9', '0.6.0')).toBeLessThan(0);
  });

  it('an unreadable version needed is taken as newer than any: refused, not guessed', () => {
    expect(understands('garbage')).toBe(false);
    expect(understands('')).toBe(false);
  });

  it('understands what it or an older version needs, not a later one', () => {
    expect(understands(THIS_VERSION)).toBe(true);
    expect(understands('0.2.0')).toBe(true);
    expect(understands('0.6.1', '0.6.0')).toBe(false);
    expect(understands('0.7.0', '0.6.0')).toBe(false);
  });

  it('never lowers what a backend needs', () => {
    expect(laterVersion('0.7.0', '0.6.0')).toBe('0.7.0');
    expect(laterVersion('0.6.0', '0.7.0')).toBe('0.7.0');
  });

  it('gates opaque sequences only', () => {
    expect(gateFor('opaque')).toBe(GATE_VERSION);
    expect(gateFor('ordered')).toBeUndefined();
  });

  it('the decoy settings give ticketd 0.5 and older no block from any ticket', () => {
    for (const ticket of [1n, 2n, 3n, 1n << 40n, (1n << 64n) - 1n])
      expect(blockForTicket(ticket, DECOY_SETTINGS).kind).toBe('exhausted');
  });
});
