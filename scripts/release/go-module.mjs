// The Go client in the layout a Go module proxy serves (`go help goproxy`), so that
// `GOPROXY=file://<folder>/go` fetches it: <module path>/@v/list, vX.Y.Z.info, vX.Y.Z.mod and
// vX.Y.Z.zip, the zip made by the module zip rules (golang.org/x/mod/zip): every regular file of
// the module's folder under `<module path>@vX.Y.Z/`, leaving out version-control folders, vendor
// folders and any folder holding a go.mod of its own (another module).
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { zipArchive } from './zip.mjs';

const SKIPPED_FOLDERS = new Set(['.git', '.hg', '.svn', '.bzr', 'vendor']);
/** The zip rules' limit on a module's unpacked size. */
const MAX_UNPACKED_BYTES = 500 * 1024 * 1024;

/**
 * The module path a go.mod declares.
 * @param {string} goMod
 * @returns {string}
 */
export function modulePath(goMod) {
  const match = /^module\s+("?)([^\s"]+)\1\s*$/m.exec(goMod);
  if (match === null) throw new Error('go.mod declares no module path');
  return match[2];
}

/**
 * The files the module zip holds, as paths relative to the module's folder, sorted.
 * @param {string} dir
 * @returns {string[]}
 */
export function moduleFiles(dir) {
  const found = [];
  const walk = (folder) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (SKIPPED_FOLDERS.has(entry.name) || existsSync(join(path, 'go.mod'))) continue;
        walk(path);
      } else if (entry.isFile()) {
        found.push(relative(dir, path).split(sep).join('/'));
      }
    }
  };
  walk(dir);
  return found.sort();
}

/**
 * Writes the proxy layout of the module in `moduleDir` at `version` (without its `v`) under
 * `proxyRoot`, dated `time`; returns the module path and the files written.
 * @param {{ moduleDir: string, version: string, proxyRoot: string, time: Date }} options
 * @returns {{ path: string, written: string[] }}
 */
export function writeGoModule({ moduleDir, version, proxyRoot, time }) {
  const goModFile = join(moduleDir, 'go.mod');
  if (!existsSync(goModFile)) throw new Error(`${moduleDir} holds no go.mod: no Go module to release`);
  const goMod = readFileSync(goModFile, 'utf8');
  const path = modulePath(goMod);
  if (path !== path.toLowerCase())
    throw new Error(`module path ${path} has capitals: the proxy layout would escape them`);
  const tag = `v${version}`;
  const files = moduleFiles(moduleDir);
  let total = 0;
  const entries = files.map((file) => {
    const data = readFileSync(join(moduleDir, file));
    total += data.length;
    if (lstatSync(join(moduleDir, file)).isSymbolicLink()) throw new Error(`${file} is a symbolic link`);
    return { name: `${path}@${tag}/${file}`, data };
  });
  if (total > MAX_UNPACKED_BYTES) throw new Error(`the Go module is ${total} bytes unpacked, over the 500 MiB limit`);
  const at = join(proxyRoot, ...path.split('/'), '@v');
  mkdirSync(at, { recursive: true });
  const written = [
    ['list', `${tag}\n`],
    [`${tag}.info`, `${JSON.stringify({ Version: tag, Time: time.toISOString().replace(/\.\d{3}Z$/, 'Z') })}\n`],
    [`${tag}.mod`, goMod],
    [`${tag}.zip`, zipArchive(entries)],
  ].map(([name, data]) => {
    writeFileSync(join(at, name), data);
    return join(at, name);
  });
  return { path, written };
}
