/**
 * Entry of `npm run bench`: reads its settings and runs bench/run.ts.
 * BENCH_SECONDS (default 10) and BENCH_WARMUP_SECONDS (default 3) set the durations.
 */
import { runBench } from './run.js';

runBench({
  seconds: Number(process.env.BENCH_SECONDS ?? 10),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 3),
}).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(
      `bench: ${error instanceof Error ? error.stack : String(error)}`,
      error instanceof Error && error.cause !== undefined ? error.cause : '',
    );
    process.exit(1);
  },
);
