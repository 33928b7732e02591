/** MySQL's error numbers, told apart in one place and turned into ticketd's errors here only. */
import { BackendAccessDeniedError, CounterOverflowError, SequenceRetiredError } from '../../errors.js';

const ER_BAD_DB_ERROR = 1049;
const ER_DUP_ENTRY = 1062;
const ER_NO_SUCH_TABLE = 1146;
const ER_LOCK_DEADLOCK = 1213;
/** ER_AUTOINC_READ_FAILED and ER_WARN_DATA_OUT_OF_RANGE: the counter reached the column's maximum. */
const COUNTER_OVERFLOW = new Set([1467, 1264]);
/** ER_DBACCESS_DENIED_ERROR, ER_ACCESS_DENIED_ERROR, ER_TABLEACCESS_DENIED_ERROR: a missing GRANT. */
const ACCESS_DENIED = new Set([1044, 1045, 1142]);

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
  return new SequenceRetiredError(`sequence ${sequence} is retired on ${label}: its ticket table takes no more tickets`, { cause: error });
}

/** A counter at its column's maximum, as ticketd's error; other errors as they are. */
export function overflowError(error: unknown, label: string, table: string): unknown {
  if (!COUNTER_OVERFLOW.has(errnoOf(error) ?? 0)) return error;
  return new CounterOverflowError(`backend ${label}: ${table} reached its column's maximum`, { cause: error });
}
