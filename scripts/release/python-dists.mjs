// The Python client's wheel and sdist, built offline: `python3 -m build --no-isolation` (Debian's
// python3-build) runs the client's in-tree build backend, which needs nothing from a package index.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { must } from './run.mjs';

/** Debian's interpreter, where python3-build is installed; else the first python3 on PATH. */
const PYTHON = process.env.TICKETD_PYTHON || (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');

/**
 * The version pyproject.toml's [project] table names.
 * @param {string} pyproject
 * @returns {string}
 */
export function pyprojectVersion(pyproject) {
  const table = pyproject.split('[project]')[1] ?? '';
  const match = /^version\s*=\s*"([^"]+)"/m.exec(table);
  if (match === null) throw new Error('pyproject.toml names no [project] version');
  return match[1];
}

/**
 * Builds the wheel and the sdist of `pythonDir` into `outDir`; returns their paths.
 * @param {{ pythonDir: string, outDir: string, version: string }} options
 * @returns {string[]}
 */
export function pythonDists({ pythonDir, outDir, version }) {
  const declared = pyprojectVersion(readFileSync(join(pythonDir, 'pyproject.toml'), 'utf8'));
  if (declared !== version)
    throw new Error(`clients/python/pyproject.toml has version ${declared}, the release is ${version}: set it`);
  must(PYTHON, ['-c', 'import build'], pythonDir, {
    ...process.env,
  });
  mkdirSync(outDir, { recursive: true });
  must(PYTHON, ['-m', 'build', '--no-isolation', '--outdir', outDir, pythonDir], pythonDir);
  const made = readdirSync(outDir).filter((f) => f.includes(`-${version}`) && /\.(whl|tar\.gz)$/.test(f));
  if (made.length !== 2)
    throw new Error(`python3 -m build made ${made.join(', ') || 'nothing'}, not a wheel and an sdist`);
  return made.map((f) => join(outDir, f));
}
