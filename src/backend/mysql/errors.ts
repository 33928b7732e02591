/** MySQL's error numbers, told apart in one place and turned into ticketd's errors here only. */
import {
  BackendAccessDeniedError,
  BackendTlsError,
  CounterOverflowError,
  SequenceRetiredError,
} from '../../core/errors.js';
import type { BackendAddress } from '../backend-address.js';
import { describeTls } from '../backend-tls.js';

const ER_BAD_DB_ERROR = 1049;
const ER_DUP_ENTRY = 1062;
const ER_NO_SUCH_TABLE = 1146;
const ER_LOCK_DEADLOCK = 1213;
/** ER_AUTOINC_READ_FAILED and ER_WARN_DATA_OUT_OF_RANGE: the counter reached the column's maximum. */
const COUNTER_OVERFLOW = new Set([1467, 1264]);
/** ER_ACCESS_DENIED_ERROR: a login refused (a wrong password, or plaintext where MariaDB requires TLS). */
const ER_ACCESS_DENIED_ERROR = 1045;
/** ER_DBACCESS_DENIED_ERROR, ER_ACCESS_DENIED_ERROR, ER_TABLEACCESS_DENIED_ERROR: a missing GRANT. */
const ACCESS_DENIED = new Set([1044, ER_ACCESS_DENIED_ERROR, 1142]);

/** The server's error number, or undefined for an error that did not come from the server. */
function errnoOf(error: unknown): number | undefined {
  const errno = (error as { errno?: unknown } | null)?.errno;
  return typeof errno === 'number' ? errno : undefined;
}

/** Two REPLACEs on the same stub row: retried. */
export function isDeadlock(error: unknown): boolean {
  return errnoOf(error) === ER_LOCK_DEADLOCK;
}

/** A unique key met: a claim made before, or a row another process inserted first. */
export function isDuplicateKey(error: unknown): boolean {
  return errnoOf(error) === ER_DUP_ENTRY;
}

/** A table of a newer schema (or before init). */
export function isNoSuchTable(error: unknown): boolean {
  return errnoOf(error) === ER_NO_SUCH_TABLE;
}

/** The server has no database of the URL's name (CREATE DATABASE was never run there). */
export function isUnknownDatabase(error: unknown): boolean {
  return errnoOf(error) === ER_BAD_DB_ERROR;
}

/** True when the server answered with an error (access denied, unknown database), rather than not answering. */
export function serverAnswered(error: unknown): boolean {
  // mysql2 sets sqlMessage on errors the server sent; a socket's errors (ECONNREFUSED) carry a
  // negative errno of their own.
  return typeof (error as { sqlMessage?: unknown } | null)?.sqlMessage === 'string';
}

/** A missing GRANT, as ticketd's error naming the backend; other errors as they are. */
export function accessError(error: unknown, label: string): unknown {
  if (!ACCESS_DENIED.has(errnoOf(error) ?? 0)) return error;
  return new BackendAccessDeniedError(`backend ${label}: ${(error as Error).message}`, { cause: error });
}

/**
 * A REPLACE into a retired sequence's ticket table, which has a column more than the values this
 * ticketd's REPLACE gives by position (ER_WRONG_VALUE_COUNT_ON_ROW), as ticketd's error; other
 * errors as they are.
 */
export function retiredTableError(error: unknown, label: string, sequence: string): unknown {
  if (errnoOf(error) !== 1136) return error;
  return new SequenceRetiredError(
    `sequence ${sequence} is retired on ${label}: its ticket table takes no more tickets`,
    { cause: error },
  );
}

/** A counter at its column's maximum, as ticketd's error; other errors as they are. */
export function overflowError(error: unknown, label: string, table: string): unknown {
  if (!COUNTER_OVERFLOW.has(errnoOf(error) ?? 0)) return error;
  return new CounterOverflowError(`backend ${label}: ${table} reached its column's maximum`, { cause: error });
}

/**
 * OpenSSL's words for a chain that does not lead to a trusted CA. mysql2 overwrites the error's code
 * with HANDSHAKE_SSL_ERROR, so the message is what is left to tell them by.
 */
const UNTRUSTED =
  /self[- ]signed certificate|unable to verify the first certificate|unable to get (local )?issuer certificate|certificate signature failure|certificate not trusted/i;
const NOT_VALID_NOW = /certificate has expired|certificate is not yet valid/i;
/** ER_SECURE_TRANSPORT_REQUIRED: MySQL's refusal of plaintext (MariaDB 10.11 answers 1045 instead, measured). */
const ER_SECURE_TRANSPORT_REQUIRED = 3159;
/** The subject MySQL gives the server certificate it makes itself (auto_generate_certs). */
const MYSQL_OWN_CERTIFICATE = /^MySQL_Server_.*_Auto_Generated_Server_Certificate$/;

/**
 * A refused handshake as one line naming the backend and the setting to look at; other errors as
 * they are. The messages say what was expected and what came, never a stack.
 */
export function tlsError(error: unknown, address: BackendAddress): unknown {
  // mysql2 overwrites a refused handshake's code with HANDSHAKE_SSL_ERROR: a name mismatch is told by
  // the `reason` and `cert` Node's identity check leaves on the error.
  const e = error as {
    code?: unknown;
    reason?: unknown;
    message?: unknown;
    cert?: { subjectaltname?: unknown; subject?: { CN?: unknown } };
  } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const text = typeof e?.message === 'string' ? e.message : '';
  const backend = `backend ${address.label}`;
  const tls = describeTls(address.tls);
  const wrap = (message: string): BackendTlsError => new BackendTlsError(`${backend}: ${message}`, { cause: error });
  if (UNTRUSTED.test(text)) {
    const ca =
      address.tls.ca === undefined
        ? "the system's CA store and NODE_EXTRA_CA_CERTS (no ssl-ca given)"
        : `ssl-ca=${address.tls.ca}`;
    return wrap(`certificate not trusted (${ca}): ${text}`);
  }
  if (NOT_VALID_NOW.test(text)) return wrap(`its certificate is not valid now (${text}; ${tls})`);
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || e?.reason !== undefined) {
    const cn = String(e?.cert?.subject?.CN);
    const names = typeof e?.cert?.subjectaltname === 'string' ? e.cert.subjectaltname : `CN=${cn}`;
    // MySQL makes its own certificates at initialisation, for no host name: VERIFY_IDENTITY can never pass them.
    const own = MYSQL_OWN_CERTIFICATE.test(cn)
      ? `; this is MySQL's own certificate, which names no host: use ssl-mode=VERIFY_CA with ssl-ca=<ca.pem from its data directory>, or give the server a certificate for ${address.host}`
      : '';
    return wrap(
      `certificate is for ${names}, not ${address.host} (ssl-mode=VERIFY_IDENTITY checks the name; VERIFY_CA checks the chain only${own})`,
    );
  }
  if (code === 'HANDSHAKE_NO_SSL_SUPPORT')
    return wrap(
      `the server offers no TLS, and ${tls} needs it (configure ssl_cert/ssl_key on the server, or choose ssl-mode=PREFERRED or DISABLED)`,
    );
  if (errnoOf(error) === ER_SECURE_TRANSPORT_REQUIRED) return plaintextRefused(address, error);
  if (code === 'HANDSHAKE_SSL_ERROR' || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_'))
    return wrap(`TLS handshake failed (${text || code}; ${tls})`);
  return error;
}

/**
 * A server that refuses plaintext, met with a connection that does not use TLS. MySQL says so with
 * 3159; MariaDB with 1045, access denied. The hint names what works on that engine: a MySQL server
 * usually serves the certificate it made itself (no host name in it), so VERIFY_CA with its ca.pem.
 */
export function plaintextRefused(address: BackendAddress, cause: unknown): BackendTlsError {
  const mysql = errnoOf(cause) === ER_SECURE_TRANSPORT_REQUIRED;
  const hint = mysql
    ? "set ssl-mode=VERIFY_CA&ssl-ca=<the server's ca.pem> in the URL (MySQL's own certificates, in its data directory, name no host; VERIFY_IDENTITY needs a certificate made for " +
      address.host +
      ')'
    : 'set ssl-mode=VERIFY_IDENTITY (with ssl-ca for a private CA) in the URL';
  return new BackendTlsError(
    `backend ${address.label}: the server requires TLS (require_secure_transport=ON) and ${describeTls(address.tls)} did not use it: ${hint}, or TICKETD_BACKEND_SSL_MODE`,
    { cause },
  );
}

/** Access denied (ER_ACCESS_DENIED_ERROR): what MariaDB answers a plaintext login under require_secure_transport. */
export function isLoginDenied(error: unknown): boolean {
  return errnoOf(error) === ER_ACCESS_DENIED_ERROR;
}
