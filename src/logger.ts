/** Structured logs: pino, one JSON object per line on stdout. Secrets are redacted by path. */
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

/** What ticketd logs through: a pino logger. */
export type Logger = PinoLogger;

/** Log levels a user may choose (TICKETD_LOG_LEVEL). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Paths whose values never reach a log line. */
const REDACTED_PATHS = [
  'password',
  '*.password',
  'token',
  '*.token',
  'req.headers.authorization',
  'req.headers["x-ticketd-token"]',
];

/** A logger writing JSON lines to stdout (or `destination`), leaving stderr to the one-line fatal error. */
export function createLogger(level: LogLevel = 'info', destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      // Tickets and IDs are bigints; as strings they stay exact for any JSON reader.
      formatters: { log: (fields) => stringifyBigints(fields) },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/**
 * A logger that drops everything (tests that assert on behaviour, not on logs). Its stream is a
 * no-op rather than stdout: pino's stdout stream installs an exit hook, and this module loads on
 * `import 'ticketd'`.
 */
export const silentLogger: Logger = pino({ level: 'silent' }, { write: () => undefined });

function stringifyBigints(fields: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value === 'bigint') (copy ??= { ...fields })[key] = value.toString();
  }
  return copy ?? fields;
}
