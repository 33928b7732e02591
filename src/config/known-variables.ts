/**
 * Every TICKETD_* environment variable ticketd knows. A command refuses to start when its
 * environment holds another one, naming it and the known name nearest to it: a misspelt setting
 * (TICKETD_ADMN_TOKEN) would otherwise be dropped in silence, and the process would run without it.
 *
 * One list for every command: a shell, a container or a pod sets its variables once for all of
 * them, so what one command reads may sit in the environment of another. Besides the settings, it
 * holds the variables of the tools that share that environment (the container's healthcheck, the
 * clients' examples, the test suite and its images), so that none of them is ever refused.
 */
import { ConfigError } from '../core/errors.js';
import { SETTING_NAMES } from './settings.js';
import { FROM_FILE } from './secrets.js';

/** Read by the CLI besides the settings: the config file, `migrate --source`, `dev`'s data and server binary. */
const CLI_VARIABLES = [
  'TICKETD_CONFIG',
  'TICKETD_SOURCE',
  'TICKETD_SOURCE_FILE',
  'TICKETD_DEV_DIR',
  'TICKETD_MYSQLD',
  'TICKETD_MYSQL_ROOT',
  'TICKETD_TEST_PLANT_STRICT_BUG',
] as const;

/** Read by the tools that share a process's environment: docker/healthcheck.mjs, compose, the clients' examples, the test suite. */
const NEIGHBOUR_VARIABLES = [
  'TICKETD_HEALTHCHECK_CERT',
  'TICKETD_HEALTHCHECK_KEY',
  'TICKETD_HTTP_PORT',
  'TICKETD_MYSQL_A_PORT',
  'TICKETD_MYSQL_B_PORT',
  'TICKETD_CERTS_DIR',
  'TICKETD_URL',
  'TICKETD_URLS',
  'TICKETD_TOKEN',
  'TICKETD_SEQUENCE',
  'TICKETD_TEST_BACKENDS',
  'TICKETD_TEST_DOCKER',
  'TICKETD_TEST_RUNTIME',
  'TICKETD_MYSQL_IMAGE',
  'TICKETD_MARIADB_IMAGE',
  'TICKETD_NODE_IMAGE',
  'TICKETD_MYSQL_OFFICIAL',
  'TICKETD_NODE_OFFICIAL',
  'TICKETD_IMAGE_CACHE',
  'TICKETD_DEBIAN_MIRROR',
  'TICKETD_CHROMIUM',
  'TICKETD_PYTHON',
  'TICKETD_JAVA_BUILD_DIR',
  'TICKETD_VECTORS_DIR',
  'TICKETD_GO',
  'TICKETD_HOLDER_NEXT',
  'TICKETD_HOLDER_CLOCK_FILE',
  'TICKETD_TIMEOUT_S',
] as const;

/** Every known TICKETD_* variable, sorted. */
export const KNOWN_VARIABLES: readonly string[] = Object.freeze(
  [
    ...new Set([
      ...Object.values(SETTING_NAMES).filter((name) => name.startsWith('TICKETD_')),
      ...FROM_FILE.map(([, , variable]) => `${variable}_FILE`),
      ...CLI_VARIABLES,
      ...NEIGHBOUR_VARIABLES,
    ]),
  ].sort(),
);

/** Throws a ConfigError naming each unknown TICKETD_* variable of `env` and the known name nearest to it. */
export function refuseUnknownVariables(env: Readonly<Record<string, string | undefined>>): void {
  const known = new Set(KNOWN_VARIABLES);
  const unknown = Object.keys(env)
    .filter((name) => name.startsWith('TICKETD_') && !known.has(name))
    .sort();
  if (unknown.length === 0) return;
  throw new ConfigError(
    unknown
      .map((name) => `${name} is not a ticketd setting (did you mean ${nearest(name)}?); unset it or fix its name`)
      .join('; '),
  );
}

/** The known variable fewest edits away from `name` (the first in sorted order on a tie). */
function nearest(name: string): string {
  let best = KNOWN_VARIABLES[0]!;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of KNOWN_VARIABLES) {
    const d = editDistance(name, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

/** Levenshtein distance: insertions, deletions and substitutions, each 1. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}
