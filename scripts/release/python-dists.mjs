// The Python client's wheel and sdist, built offline: `python3 -m build --no-isolation` (Debian's
// python3-build) runs the client's in-tree build backend, which needs nothing from a package index.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { must } from './run.mjs';

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
 * @param {{ pythonDir: string, outDir: string, version: string, python: string }} options
 * @returns {string[]}
 */
export function pythonDists({ pythonDir, outDir, version, python }) {
  const declared = pyprojectVersion(readFileSync(join(pythonDir, 'pyproject.toml'), 'utf8'));
  if (declared !== version)
    throw new Error(`clients/python/pyproject.toml has version ${declared}, the release is ${version}: set it`);
  const init = readFileSync(join(pythonDir, 'src', 'ticketd_client', '__init__.py'), 'utf8');
  const runtime = /^__version__ = "([^"]+)"/m.exec(init)?.[1];
  if (runtime !== version)
    throw new Error(
      `clients/python/src/ticketd_client/__init__.py has __version__ ${runtime}, the release is ${version}: set it`,
    );
  mkdirSync(outDir, { recursive: true });
  must(python, ['-m', 'build', '--no-isolation', '--outdir', outDir, pythonDir], pythonDir);
  const made = readdirSync(outDir).filter((f) => f.includes(`-${version}`) && /\.(whl|tar\.gz)$/.test(f));
  if (made.length !== 2)
    throw new Error(`python3 -m build made ${made.join(', ') || 'nothing'}, not a wheel and an sdist`);
  return made.map((f) => join(outDir, f));
}
