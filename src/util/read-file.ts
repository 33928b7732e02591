/** Files named by settings (certificates, keys, secrets): read whole, and why not said in the settings' words. */
import { readFileSync } from 'node:fs';

/** A file's text; throws an Error saying `PATH cannot be read (CODE)`, for the caller to prefix with the setting. */
export function readTextFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`, {
      cause: error,
    });
  }
}

/** Why a file cannot be read (`PATH cannot be read (CODE)`), or undefined when it can. */
export function unreadableFile(path: string): string | undefined {
  try {
    readTextFile(path);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
