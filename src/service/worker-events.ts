/** Where lease events are counted (metrics). */
export interface WorkerEvents {
  taken(pool: string): void;
  renewed(pool: string): void;
  released(pool: string): void;
  /** A take, renewal or release refused: the pool exhausted, a lease lost, or a claim that held the worker ID. */
  refused(pool: string, reason: 'exhausted' | 'lost' | 'claimed'): void;
  /** A lease taken or renewed without a claim on every other backend (one did not answer). */
  unclaimed(pool: string): void;
  /** The clock skew a holder measured against the server at its renewal. */
  skew(pool: string, skewMs: number): void;
}

/** Events that go nowhere: the default when no metrics are given. */
export const NO_WORKER_EVENTS: WorkerEvents = {
  taken() {},
  renewed() {},
  released() {},
  refused() {},
  unclaimed() {},
  skew() {},
};
