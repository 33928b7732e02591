// Running the tools a release is made with: each must succeed, or the release stops naming it.
import { spawnSync } from 'node:child_process';

/**
 * Runs `command` in `cwd` and returns its stdout; throws with its stderr's end when it fails.
 * @param {string} command
 * @param {readonly string[]} args
 * @param {string} cwd
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {string}
 */
export function must(command, args, cwd, env = process.env) {
  const ran = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (ran.error !== undefined) throw new Error(`${command}: ${ran.error.message}`);
  if (ran.status !== 0) {
    const said = `${ran.stderr}${ran.stdout}`.trim().split('\n').slice(-15).join('\n');
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) exited with ${ran.status}:\n${said}`);
  }
  return ran.stdout;
}

/**
 * Whether `command` runs at all (found on PATH and exits 0 with `args`).
 * @param {string} command
 * @param {readonly string[]} args
 * @returns {boolean}
 */
export function runs(command, args) {
  const ran = spawnSync(command, args, { stdio: 'ignore', timeout: 20_000 });
  return ran.error === undefined && ran.status === 0;
}
