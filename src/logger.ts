/** A minimal structured logger: one JSON object per line. Secrets are never passed to it. */

/** Fields attached to a log line. */
export type LogFields = Record<string, unknown>;

/** What ticketd needs from a logger. */
export interface Logger {
  info(fields: LogFields, message: string): void;
  warn(fields: LogFields, message: string): void;
  error(fields: LogFields, message: string): void;
}

/** Writes JSON lines to stdout (like pino), leaving stderr to the one-line fatal error. */
export function createJsonLogger(write: (line: string) => void = (line) => process.stdout.write(line)): Logger {
  const log = (level: number, fields: LogFields, msg: string): void => {
    write(`${JSON.stringify({ level, time: Date.now(), ...fields, msg }, bigintReplacer)}\n`);
  };
  return {
    info: (fields, msg) => log(30, fields, msg),
    warn: (fields, msg) => log(40, fields, msg),
    error: (fields, msg) => log(50, fields, msg),
  };
}

/** A logger that drops everything (tests that assert on behaviour, not on logs). */
export const silentLogger: Logger = Object.freeze({ info() {}, warn() {}, error() {} });

function bigintReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
