/**
 * The audit log: one line for every admin action and every refused request, naming the token (by
 * its name, never the secret), the action, its target and the outcome (docs/operating.md, "Audit log").
 */
import type { Response } from 'express';
import type { Caller } from '../core/caller.js';
import type { Logger } from '../logger.js';

/** Codes of the refusals the audit log records: no token, or the wrong one (a 429's flood is counted in /metrics instead). */
const REFUSALS: ReadonlySet<string> = new Set(['TICKETD_UNAUTHORIZED', 'TICKETD_FORBIDDEN']);

/** One audit record: the `audit` field of a log line. */
export interface AuditRecord {
  /** The token's name (anonymous, unknown, peer, or a configured name). */
  readonly caller: string;
  /** For a peer's forwarded call, the caller it forwards for. */
  readonly onBehalfOf?: string | undefined;
  readonly action: string;
  readonly target: string;
  /** `ok` or `failed` with its status for an admitted action; `refused` for a refusal. */
  readonly outcome: 'ok' | 'failed' | 'refused';
  readonly status: number;
  readonly code?: string | undefined;
}

/** Writes audit lines. */
export interface Audit {
  /** Logs the admitted admin action when its answer is sent, with that answer's status. */
  admitted(caller: Caller, action: string, target: string, res: Response): void;
  /** Logs a refusal, if the error is one the audit log records (REFUSALS). */
  refused(caller: Caller, action: string, target: string, error: unknown): void;
}

/** The audit log, as `audit` lines of the service's log. */
export function createAudit(logger: Logger): Audit {
  const write = (record: AuditRecord): void => {
    logger.info({ audit: record }, `audit: ${record.caller} ${record.action} ${record.target}: ${record.outcome}`);
  };
  return {
    admitted: (caller, action, target, res) => {
      res.once('finish', () =>
        write({
          caller: caller.name,
          action,
          target,
          outcome: res.statusCode < 400 ? 'ok' : 'failed',
          status: res.statusCode,
        }),
      );
    },
    refused: (caller, action, target, error) => {
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code !== 'string' || !REFUSALS.has(code)) return;
      const status = code === 'TICKETD_UNAUTHORIZED' ? 401 : 403;
      write({ caller: caller.name, onBehalfOf: caller.onBehalfOf, action, target, outcome: 'refused', status, code });
    },
  };
}
