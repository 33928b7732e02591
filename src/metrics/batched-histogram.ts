/**
 * A histogram for the request path: each labelled child counts into plain arrays, and the series are
 * written from them when scraped. prom-client's Histogram hashes its labels into a string key on
 * every observe, even through a child from labels(), which cost about a microsecond of each
 * one-ID request. The registry lists this one as it lists its own (through get(), with the same
 * values and labels in the same order), and `serve --workers` sums it across workers as it sums a
 * prom-client histogram.
 */
import type { Metric, Registry } from 'prom-client';

/** One label set's counter: observe() is what the request path calls. */
export interface HistogramChild {
  observe(value: number): void;
}

/** A value of the series as a registry writes it (prom-client's own shape). */
interface SeriesValue {
  readonly metricName: string;
  readonly labels: Record<string, string | number>;
  readonly value: number;
}

interface Child {
  readonly labels: Readonly<Record<string, string>>;
  /** Observations per bucket, not cumulative: [k] counts values in (bounds[k-1], bounds[k]]. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/** A histogram with fixed label names and buckets, registered with `registers`. */
export class BatchedHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #bounds: readonly number[];
  readonly #children: Child[] = [];

  constructor(options: { name: string; help: string; buckets: readonly number[]; registers: readonly Registry[] }) {
    this.name = options.name;
    this.help = options.help;
    this.#bounds = [...options.buckets].sort((a, b) => a - b);
    // The registry needs only name, type and get(): what this class has of prom-client's Metric.
    for (const registry of options.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** The counter of one label set; call once per set and keep it (each call makes a new series). */
  child(labels: Readonly<Record<string, string>>): HistogramChild {
    const child: Child = { labels, counts: new Float64Array(this.#bounds.length), sum: 0, count: 0 };
    this.#children.push(child);
    const bounds = this.#bounds;
    return {
      observe: (value) => {
        child.sum += value;
        child.count++;
        for (let k = 0; k < bounds.length; k++) {
          if (value <= bounds[k]!) {
            child.counts[k]!++;
            return;
          }
        }
      },
    };
  }

  /** Zeroes every label set's counts (what a registry's resetMetrics() asks of each metric). */
  reset(): void {
    for (const child of this.#children) {
      child.counts.fill(0);
      child.sum = 0;
      child.count = 0;
    }
  }

  /** The series: per label set, cumulative buckets (`le` first), +Inf, sum and count. */
  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: SeriesValue[] }> {
    const values: SeriesValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, counts, sum, count } of this.#children) {
      let below = 0;
      this.#bounds.forEach((le, k) => {
        below += counts[k]!;
        values.push({ metricName: bucket, labels: { le, ...labels }, value: below });
      });
      values.push(
        { metricName: bucket, labels: { le: '+Inf', ...labels }, value: count },
        { metricName: `${this.name}_sum`, labels: { ...labels }, value: sum },
        { metricName: `${this.name}_count`, labels: { ...labels }, value: count },
      );
    }
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values,
    });
  }
}
