/** HTTPS for clients (TICKETD_TLS_CERT, TICKETD_TLS_KEY, TICKETD_TLS_CLIENT_CA): the PEM files read, now and on a reload. */
import type { SecureContextOptions } from 'node:tls';
import type { HttpsFiles } from '../config/load-config.js';
import { ConfigError } from '../core/errors.js';
import { readTextFile } from '../util/read-file.js';

/** The certificate, key and client CA as node:tls takes them. Throws a ConfigError naming the file it could not read. */
export function readHttpsFiles(files: HttpsFiles): SecureContextOptions {
  const read = (setting: string, path: string): string => {
    try {
      return readTextFile(path);
    } catch (error) {
      throw new ConfigError(`${setting}: ${(error as Error).message}`, { cause: error });
    }
  };
  return {
    cert: read('TICKETD_TLS_CERT', files.cert),
    key: read('TICKETD_TLS_KEY', files.key),
    ...(files.clientCa !== undefined && { ca: read('TICKETD_TLS_CLIENT_CA', files.clientCa) }),
  };
}
