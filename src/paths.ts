/** Files shipped beside the code. This file sits directly in src/ (and dist/), one level below the package root. */
import { fileURLToPath } from 'node:url';

/** The sql/ directory: schema and backend option files. */
export const SQL_DIR = fileURLToPath(new URL('../sql/', import.meta.url));
