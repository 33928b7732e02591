/** A backend's timeouts and pool size: the allocator's options, whichever driver carries them out. */

/** Timeouts and pool size for one backend. */
export interface BackendOptions {
  readonly connectTimeoutMs: number;
  readonly queryTimeoutMs: number;
  /** Timeout of a claim: refills wait for it, so it is shorter. */
  readonly claimTimeoutMs: number;
  /** Timeout of CREATE and ALTER: fast on one-row tables, but a hung server must not hold them forever. */
  readonly ddlTimeoutMs: number;
  readonly poolSize: number;
  /** Deadlock retries per REPLACE. */
  readonly deadlockRetries: number;
}

/** Defaults: a hung backend is given up on within a second. */
export const DEFAULT_BACKEND_OPTIONS: BackendOptions = Object.freeze({
  connectTimeoutMs: 1000,
  queryTimeoutMs: 1000,
  claimTimeoutMs: 500,
  ddlTimeoutMs: 10_000,
  poolSize: 4,
  deadlockRetries: 8,
});
