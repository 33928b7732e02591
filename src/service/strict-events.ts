/** What a strict sequence counts (metrics.ts implements it). */
export interface StrictEvents {
  /** This process became leader (true) or stopped leading (false). */
  leadership(sequence: string, leading: boolean): void;
  /** A call forwarded to the leader, and how many requests it carried. */
  forwarded(sequence: string, requests: number): void;
  /** A bound write (grant or renewal) that reached a majority, or did not. */
  boundWrite(sequence: string, ok: boolean): void;
  /** How long a request waited for a leader before it was served. */
  stalled(sequence: string, seconds: number): void;
}
