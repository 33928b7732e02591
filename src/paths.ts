/** Files shipped beside the code, found from wherever this module was compiled to. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The sql/ directory (schema and backend option files): the nearest one above this module. */
export const SQL_DIR = findUp(dirname(fileURLToPath(import.meta.url)));
/** The package's package.json, beside sql/. */
export const PACKAGE_JSON = join(dirname(SQL_DIR), 'package.json');

/** The package's version, from its package.json. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }).version;
}

function findUp(from: string): string {
  // src/ and dist/ sit one level below the package root; the bench build (dist-bench/src/) two.
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'sql', 'schema.sql'))) return join(dir, 'sql');
    if (dirname(dir) === dir) throw new Error(`no sql/schema.sql above ${from}`);
  }
}
