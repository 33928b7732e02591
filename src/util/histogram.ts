/** A fixed-bucket histogram in the Prometheus style (cumulative at render time). */

/** Upper bounds in seconds for MySQL call latencies: 0.5 ms to 2.5 s. */
export const LATENCY_BUCKETS_SECONDS = Object.freeze([0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]);

/** Counts of observations per bucket, their sum and count. */
export class Histogram {
  readonly bounds: readonly number[];
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(bounds: readonly number[] = LATENCY_BUCKETS_SECONDS) {
    this.bounds = bounds;
    this.counts = bounds.map(() => 0);
  }

  /** Records one observation. */
  observe(value: number): void {
    this.sum += value;
    this.count++;
    const i = this.bounds.findIndex((b) => value <= b);
    if (i >= 0) this.counts[i]!++;
  }
}
