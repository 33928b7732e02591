/** HTTPS for clients (TICKETD_TLS_CERT, TICKETD_TLS_KEY, TICKETD_TLS_CLIENT_CA): the PEM files read, now and on a reload. */
import { readFileSync } from 'node:fs';
import type { SecureContextOptions } from 'node:tls';
import type { HttpsFiles } from '../config.js';
import { ConfigError } from '../errors.js';

/** The certificate, key and client CA as node:tls takes them. Throws a ConfigError naming the file it could not read. */
export function readHttpsFiles(files: HttpsFiles): SecureContextOptions {
  const read = (setting: string, path: string): string => {
    try {
      return readFileSync(path, 'utf8');
    } catch (error) {
      throw new ConfigError(`${setting}: ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { cause: error });
    }
  };
  return {
    cert: read('TICKETD_TLS_CERT', files.cert),
    key: read('TICKETD_TLS_KEY', files.key),
    ...(files.clientCa !== undefined && { ca: read('TICKETD_TLS_CLIENT_CA', files.clientCa) }),
  };
}
