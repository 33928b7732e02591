/**
 * Snowflake holder processes of each client (Node, Python, Java) behind one signature, for tests
 * that run one scenario in every language: the Node holder (snowflake-holder.mjs), the Python one
 * (clients/python/conformance/snowflake_holder.py) and the Java conformance program's `holder`.
 */
import { join } from 'node:path';
import { buildJavaClient, javaMissing, spawnJava, type JavaBuild } from './java-client.js';
import { findPython, PYTHON_CLIENT_DIR } from './python.js';
import { spawnHolder, type Holder } from './snowflake-fleet.js';

/** A client language the holders run in. */
export type ClientLanguage = 'node' | 'python' | 'java';

/** How a holder mints: `sync` (nextSync after ready) or `next` (the waiting next()). */
export type MintMode = 'sync' | 'next';

/** Starts holders of one language; `leaseWaitMs` is the client's lease wait option (its default when undefined). */
export interface HolderFactory {
  readonly language: ClientLanguage;
  start(dir: string, name: string, pool: string, urls: readonly string[], mode: MintMode, leaseWaitMs?: number): Holder;
}

/** Why a language's holders cannot run here, or undefined. */
export function holdersMissing(language: ClientLanguage): string | undefined {
  if (language === 'java') return javaMissing();
  if (language === 'python') {
    const found = findPython();
    return found.ok ? undefined : found.reason;
  }
  return undefined;
}

/** The holders of a language; Java's is built into `buildDir` first (clients/java/build.sh). */
export async function holderFactory(language: ClientLanguage, buildDir: string): Promise<HolderFactory> {
  const more = (mode: MintMode, leaseWaitMs: number | undefined): string[] =>
    leaseWaitMs === undefined ? [mode] : [mode, String(leaseWaitMs)];
  if (language === 'node')
    return {
      language,
      start: (dir, name, pool, urls, mode, leaseWaitMs) =>
        spawnHolder(dir, name, pool, urls, { idsPerTick: 20, more: more(mode, leaseWaitMs) }),
    };
  if (language === 'python') {
    const found = findPython();
    if (!found.ok) throw new Error(found.reason);
    const command = [
      'env',
      `PYTHONPATH=${PYTHON_CLIENT_DIR}src`,
      'PYTHONDONTWRITEBYTECODE=1',
      found.command,
      join(PYTHON_CLIENT_DIR, 'conformance', 'snowflake_holder.py'),
    ];
    return {
      language,
      start: (dir, name, pool, urls, mode, leaseWaitMs) =>
        spawnHolder(dir, name, pool, urls, { idsPerTick: 20, command, more: more(mode, leaseWaitMs) }),
    };
  }
  const build: JavaBuild = await buildJavaClient(buildDir);
  return {
    language,
    start: (dir, name, pool, urls, mode, leaseWaitMs) =>
      spawnJava(build, name, ['holder', dir, name, pool, urls.join(','), '20', ...more(mode, leaseWaitMs)]),
  };
}
