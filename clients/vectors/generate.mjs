#!/usr/bin/env node
/**
 * Writes the shared client test vectors from the built TypeScript client (run `npm run build` first):
 *   node clients/vectors/generate.mjs          writes clients/vectors/*.json
 *   node clients/vectors/generate.mjs --check  exits 1 when a checked-in file differs
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildVectors } from './build-vectors.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, '..', '..', 'packages', 'client', 'dist', 'esm');
const sdk = await import(join(dist, 'index.js'));
const layoutModule = await import(join(dist, 'snowflake-layout.js'));
const check = process.argv.includes('--check');
let differs = 0;
for (const [name, text] of Object.entries(buildVectors(sdk, layoutModule))) {
  const path = join(here, name);
  if (!check) {
    writeFileSync(path, text);
    console.log(`wrote ${path}`);
    continue;
  }
  let old = '';
  try {
    old = readFileSync(path, 'utf8');
  } catch {
    old = '';
  }
  if (old !== text) {
    differs++;
    console.error(`${path} differs from what the TypeScript client computes: run node clients/vectors/generate.mjs`);
  }
}
process.exitCode = differs === 0 ? 0 : 1;
