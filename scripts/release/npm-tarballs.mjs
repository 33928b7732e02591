// The Node tarballs of a release: the client's as `npm pack` makes it, and the server's with its
// production dependency tree pinned.
//
// Why the server's tree is bundled and not only shrinkwrapped: npm (11 here) decides whether a
// package carries an npm-shrinkwrap.json from the `_hasShrinkwrap` field of the package's manifest,
// which only a registry's metadata sets on publish. pacote's manifest of a tarball file or URL drops
// underscore fields, so `npm install ./ticketd-X.Y.Z.tgz` never reads the shrinkwrap inside it and
// resolves every range afresh (npm/cli#5349, #7977, and #4583 for registries that omit the field).
// npm 12 stops reading npm-shrinkwrap.json inside dependencies altogether, and names
// bundleDependencies as the way to ship a locked tree. So the release installs the production tree
// from the lock file (npm ci) into the package and bundles all of it: two installs of one tarball are
// the same tree, offline. npm-shrinkwrap.json stays in the tarball as the record of that tree (and
// is honoured where a registry serves the package with `_hasShrinkwrap`).
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { must } from './run.mjs';

const CLIENT = 'ticketd-client';

/**
 * Packs the server and the client into `work` (from the build already made).
 * @param {string} root
 * @param {string} work
 * @returns {{ server: string, client: string }} the two tarballs' paths
 */
function packBoth(root, work) {
  const out = must(
    'npm',
    ['pack', '--workspaces', '--include-workspace-root', '--ignore-scripts', '--json', '--pack-destination', work],
    root,
  );
  const manifests = JSON.parse(out.slice(out.indexOf('[')));
  const file = (name) => {
    const found = manifests.find((m) => m.name === name);
    if (found === undefined) throw new Error(`npm pack made no ${name} tarball`);
    return join(work, found.filename);
  };
  return { server: file('ticketd'), client: file(CLIENT) };
}

/**
 * The lock file of the server's production tree: the repository's package-lock.json without the
 * development packages and without the workspace link to the client (which is bundled as packed).
 * @param {Record<string, any>} lock
 * @param {Record<string, any>} pkg the package.json the tree is for (without the client)
 * @returns {Record<string, any>}
 */
function productionLock(lock, pkg) {
  const packages = {
    '': {
      name: pkg.name,
      version: pkg.version,
      license: pkg.license,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path.startsWith('node_modules/') || entry.dev === true || entry.link === true) continue;
    if (path === `node_modules/${CLIENT}` || path.startsWith(`node_modules/${CLIENT}/`)) continue;
    packages[path] = entry;
  }
  return { name: pkg.name, version: pkg.version, lockfileVersion: 3, requires: true, packages };
}

/**
 * Peer dependencies of the production tree that npm installed beside it (mysql2 asks for
 * @types/node), by name and installed version. npm pack bundles what `dependencies` reaches, not
 * peers, so unless they are declared too every install would resolve them afresh from a registry.
 * @param {string} dir
 * @param {Record<string, any>} lock
 * @returns {Record<string, string>}
 */
function installedPeers(dir, lock) {
  const peers = {};
  for (const entry of Object.values(lock.packages)) {
    for (const name of Object.keys(entry.peerDependencies ?? {})) {
      if (entry.peerDependenciesMeta?.[name]?.optional === true) continue;
      const manifest = join(dir, 'node_modules', name, 'package.json');
      if (existsSync(manifest)) peers[name] = JSON.parse(readFileSync(manifest, 'utf8')).version;
    }
  }
  return peers;
}

/**
 * Makes `ticketd-X.Y.Z.tgz` (dependency tree installed from the lock file and bundled, with
 * npm-shrinkwrap.json) and `ticketd-client-X.Y.Z.tgz` in `outDir`; returns their paths.
 * @param {{ root: string, work: string, outDir: string }} options
 * @returns {{ server: string, client: string }}
 */
export function npmTarballs({ root, work, outDir }) {
  mkdirSync(work, { recursive: true });
  mkdirSync(outDir, { recursive: true });
  const packed = packBoth(root, work);
  const client = join(outDir, packed.client.slice(work.length + 1));
  cpSync(packed.client, client);

  const staged = join(work, 'server');
  mkdirSync(staged, { recursive: true });
  must('tar', ['-xzf', packed.server, '-C', staged], root);
  const dir = join(staged, 'package');
  const bundledClient = join(staged, CLIENT);
  renameSync(join(dir, 'node_modules', CLIENT), bundledClient);
  rmSync(join(dir, 'node_modules'), { recursive: true, force: true });

  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  // What only the repository uses: a tarball has no workspaces, no sources to build, no tests.
  delete pkg.devDependencies;
  delete pkg.workspaces;
  delete pkg.scripts;
  const { [CLIENT]: clientRange, ...others } = pkg.dependencies;
  if (clientRange === undefined) throw new Error(`package.json does not depend on ${CLIENT}`);
  const lock = productionLock(JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')), {
    ...pkg,
    dependencies: others,
  });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ ...pkg, dependencies: others }, null, 2)}\n`);
  writeFileSync(join(dir, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
  // The npm cache first (npm ci filled it); the registry only for what it lacks.
  must('npm', ['ci', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], dir);

  renameSync(bundledClient, join(dir, 'node_modules', CLIENT));
  const clientPkg = JSON.parse(readFileSync(join(dir, 'node_modules', CLIENT, 'package.json'), 'utf8'));
  // The repository's lock also lists what only its workspace used (the client's development types):
  // npm ci installed no such package, and the shrinkwrap names only the tree that is there.
  lock.packages = Object.fromEntries(
    Object.entries(lock.packages).filter(([path]) => path === '' || existsSync(join(dir, path, 'package.json'))),
  );
  pkg.dependencies = { ...installedPeers(dir, lock), ...pkg.dependencies };
  lock.packages[''].dependencies = pkg.dependencies;
  lock.packages[`node_modules/${CLIENT}`] = {
    version: clientPkg.version,
    license: clientPkg.license,
    engines: clientPkg.engines,
  };
  pkg.bundleDependencies = Object.keys(pkg.dependencies);
  // npm-packlist leaves the shrinkwrap out when `files` lists what to pack: name it.
  pkg.files = [...pkg.files, 'npm-shrinkwrap.json'];
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  rmSync(join(dir, 'package-lock.json'));
  rmSync(join(dir, 'node_modules', '.package-lock.json'), { force: true });
  writeFileSync(join(dir, 'npm-shrinkwrap.json'), `${JSON.stringify(lock, null, 2)}\n`);
  // The tree on disk must be the one the shrinkwrap names: npm ls fails on anything missing or extra.
  must('npm', ['ls', '--omit=dev', '--all', '--package-lock-only=false'], dir);

  const out = must('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', outDir], dir);
  const [manifest] = JSON.parse(out.slice(out.indexOf('[')));
  if (!manifest.files.some((f) => f.path === 'npm-shrinkwrap.json'))
    throw new Error('the server tarball lacks npm-shrinkwrap.json');
  return { server: join(outDir, manifest.filename), client };
}
