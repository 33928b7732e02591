/** Milliseconds since some epoch; injected so tests control time. */
export type Clock = () => number;
/** A number in [0, 1); injected so backoff jitter is reproducible in tests. */
export type Random = () => number;
