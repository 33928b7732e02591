/**
 * The shared client test vectors (clients/vectors/*.json) are what the TypeScript client computes:
 * the Java and Python clients prove they agree with it by reproducing them. A change to the
 * permutation, a scheme or the Snowflake layout that changes them fails here until they are
 * regenerated (node clients/vectors/generate.mjs), and then the other clients' tests fail until
 * they agree again.
 */
import { readFileSync } from 'node:fs';
import * as sdk from 'ticketd-client';
import * as layoutModule from '../../packages/client/src/snowflake-layout.js';
import { buildVectors } from '../../clients/vectors/build-vectors.mjs';

const files = Object.entries(buildVectors(sdk, layoutModule));

test('there are vector files for the permutation, AES-256, Snowflake layouts and error codes', () => {
  expect(files.map(([name]) => name).sort()).toEqual([
    'aes256.json',
    'errors.json',
    'permutation.json',
    'snowflake.json',
  ]);
});

test.each(files)('clients/vectors/%s is what the TypeScript client computes now', (name, text) => {
  const checkedIn = readFileSync(new URL(`../../clients/vectors/${name}`, import.meta.url), 'utf8');
  // Compared as text, not parsed: the other clients read these very bytes.
  expect(
    checkedIn === text ? 'identical' : `${name} differs: run node clients/vectors/generate.mjs after npm run build`,
  ).toBe('identical');
});

test('the vectors cover both schemes over small, 32-bit, signed 63-bit and full 64-bit domains', () => {
  const permutation = JSON.parse(files.find(([name]) => name === 'permutation.json')![1]) as {
    cases: { scheme: string; maxId: string; pairs: string[][] }[];
  };
  for (const scheme of Object.keys(sdk.PERMUTATION_SCHEMES)) {
    const maxIds = new Set(permutation.cases.filter((c) => c.scheme === scheme).map((c) => c.maxId));
    for (const maxId of ['4096', '4294967295', String((1n << 63n) - 1n), String((1n << 64n) - 1n)])
      expect(maxIds.has(maxId)).toBe(true);
  }
  // Not the identity: a broken build that passed IDs through would still "match" itself.
  const wide = permutation.cases.find((c) => c.maxId === String((1n << 64n) - 1n))!;
  expect(wide.pairs.filter(([ordered, opaque]) => ordered !== opaque).length).toBeGreaterThan(10);
});
