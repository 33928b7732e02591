/**
 * One `ticketd dev` per data folder. The lock file names the owning process; a second `dev` on
 * the same folder is refused while that process lives, so it never takes over (or kills) the
 * servers of a demo that is running. A lock whose owner is gone is taken over: its servers are
 * orphans, and the launcher stops them.
 */
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DevAlreadyRunningError } from '../core/errors.js';

/** The lock file's name inside the data folder. */
export const DEV_LOCK_FILE = 'ticketd-dev.pid';

/** A held lock. */
export interface DevLock {
  /** Removes the lock file if it is still this process's. */
  release(): void;
}

/** Takes the data folder for this process, or throws naming the `ticketd dev` that holds it. */
export function acquireDevLock(dir: string, pid: number = process.pid): DevLock {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, DEV_LOCK_FILE);
  const owner = readOwner(path);
  if (owner !== undefined && owner !== pid && isDevProcess(owner)) {
    throw new DevAlreadyRunningError(
      `ticketd dev (pid ${owner}) is already using the data folder ${dir}; stop it first (Ctrl-C), or give this one another --data-dir`,
    );
  }
  writeFileSync(path, `${pid}\n`);
  const release = (): void => {
    if (readOwner(path) === pid) unlinkSync(path);
  };
  process.once('exit', release);
  return { release };
}

function readOwner(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** True when the process lives and is a `ticketd dev` (a reused pid of another program is not). */
function isDevProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but is another user's; count it as alive rather than take its folder.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('dev');
  } catch {
    // No /proc (macOS): a live process holding the lock is taken to be the owner.
    return true;
  }
}
