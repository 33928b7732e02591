package dev.ticketd.client.bench;

import dev.ticketd.client.Snowflake;
import dev.ticketd.client.SnowflakeLayout;
import dev.ticketd.client.TicketClient;
import dev.ticketd.client.TicketdException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.function.LongSupplier;

/**
 * The Java client's in-process figures against a running ticketd, for bench/java-client.ts: IDs/s
 * handed out from buffered blocks (one thread and several) and Snowflake IDs/s. Each generator is
 * warmed up (JIT) before it is measured; the best of ROUNDS runs of RUN_MS counts, as in
 * bench/in-process.ts. One JSON line per result on stdout.
 *
 * <p>Environment: TICKETD_URL; BENCH_SEQUENCE_10K, BENCH_SEQUENCE_1M, BENCH_SEQUENCE_OPAQUE
 * (sequences of those block sizes), BENCH_OPAQUE_TOKEN (a client token of the opaque one); BENCH_POOL_DEFAULT (10-bit workers), BENCH_POOL_WIDE (6-bit); THREADS.
 */
public final class Bench {
  private static final long RUN_MS = 300;
  private static final int ROUNDS = 3;
  private static final long WARMUP_MS = 1000;
  /** A layout with 16 bits of sequence: 65,536 IDs per millisecond, so the clock read is what limits it. */
  private static final SnowflakeLayout WIDE = new SnowflakeLayout(41, 6, 16);
  private static volatile long sink;

  private Bench() {}

  public static void main(String[] args) throws Exception {
    String url = System.getenv("TICKETD_URL");
    int threads = Integer.parseInt(System.getenv().getOrDefault("THREADS", "4"));
    try (TicketClient small = client(url, System.getenv("BENCH_SEQUENCE_10K"));
        TicketClient large = client(url, System.getenv("BENCH_SEQUENCE_1M"));
        // Unsigned: an opaque sequence made with the default maxId of older versions spans 64 bits.
        TicketClient opaque = TicketClient.builder().urls(url).sequence(System.getenv("BENCH_SEQUENCE_OPAQUE")).token(System.getenv("BENCH_OPAQUE_TOKEN")).unsignedIds(true).build()) {
      // The in-process baseline, no client: what one atomic increment costs on this JVM, this run.
      java.util.concurrent.atomic.AtomicLong counter = new java.util.concurrent.atomic.AtomicLong();
      report("Java AtomicLong.incrementAndGet (in-process baseline, no client)", single(counter::incrementAndGet));
      report("Java next() (leases blocks of 10,000)", single(small::next));
      report("Java nextNow() (leases blocks of 10,000)", single(() -> nowOrWait(small)));
      report("Java next() (leases blocks of 1,000,000)", single(large::next));
      report("Java nextNow() (leases blocks of 1,000,000)", single(() -> nowOrWait(large)));
      // Longer warm-up: the AES intrinsics come with C2, which the shared cores' load can delay past 1 s.
      single(opaque::next);
      report("Java next() (opaque IDs, leases blocks of 1,000,000)", single(opaque::next));
      report("Java next(), " + threads + " threads (leases blocks of 1,000,000)", parallel(threads, large::next));
      report("Java next(), " + threads + " threads (leases blocks of 10,000)", parallel(threads, small::next));
      unique(large, threads);
    }
    try (Snowflake standard = Snowflake.builder().urls(url).pool(System.getenv("BENCH_POOL_DEFAULT")).build();
        Snowflake wide = Snowflake.builder().urls(url).pool(System.getenv("BENCH_POOL_WIDE")).layout(WIDE).build()) {
      standard.ready();
      wide.ready();
      report("Java Snowflake nextNow() (layout 41/10/12: at most 4,096 IDs per ms)", single(standard::nextNow));
      report("Java Snowflake next() (layout 41/10/12)", single(standard::next));
      report("Java Snowflake nextNow() (layout 41/6/16)", single(wide::nextNow));
      report("Java Snowflake next() (layout 41/6/16)", single(wide::next));
      report("Java Snowflake next(), " + threads + " threads (layout 41/6/16)", parallel(threads, wide::next));
    }
  }

  private static TicketClient client(String url, String sequence) {
    return TicketClient.builder().urls(url).sequence(sequence).build();
  }

  /** nextNow(), and next() when no block is buffered: every call counted yields a real ID. */
  private static long nowOrWait(TicketClient client) {
    try {
      return client.nextNow();
    } catch (TicketdException e) {
      return client.next();
    }
  }

  private static void report(String name, double idsPerSecond) {
    System.out.println("{\"name\":\"" + name + "\",\"idsPerSecond\":" + Math.round(idsPerSecond) + "}");
    System.out.flush();
  }

  /** Best IDs/s of one thread over ROUNDS runs of RUN_MS, after WARMUP_MS of the same loop. */
  private static double single(LongSupplier next) {
    run(next, WARMUP_MS);
    double best = 0;
    for (int round = 0; round < ROUNDS; round++) best = Math.max(best, run(next, RUN_MS));
    return best;
  }

  private static double run(LongSupplier next, long ms) {
    long n = 0;
    long x = 0;
    long start = System.nanoTime();
    long end = start + ms * 1_000_000;
    long now = start;
    while (now < end) {
      for (int i = 0; i < 1000; i++) x ^= next.getAsLong();
      n += 1000;
      now = System.nanoTime();
    }
    sink = x;
    return n / ((now - start) / 1e9);
  }

  /** Best total IDs/s of `threads` threads calling at once, over ROUNDS runs of RUN_MS after a warm-up. */
  private static double parallel(int threads, LongSupplier next) throws Exception {
    double best = 0;
    for (int round = -1; round < ROUNDS; round++) {
      long ms = round < 0 ? WARMUP_MS : RUN_MS;
      double[] rates = new double[threads];
      CyclicBarrier start = new CyclicBarrier(threads);
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int me = t;
        Thread worker = new Thread(() -> {
          try {
            start.await();
          } catch (Exception e) {
            return;
          }
          rates[me] = run(next, ms);
        });
        worker.start();
        workers.add(worker);
      }
      for (Thread worker : workers) worker.join();
      if (round >= 0) best = Math.max(best, Arrays.stream(rates).sum());
    }
    return best;
  }

  /** IDs taken by several threads at once, checked for repeats (a bench asserts uniqueness, not time). */
  private static void unique(TicketClient client, int threads) throws Exception {
    int each = 1_000_000;
    long[][] got = new long[threads][each];
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      long[] mine = got[t];
      Thread worker = new Thread(() -> {
        for (int i = 0; i < each; i++) mine[i] = client.next();
      });
      worker.start();
      workers.add(worker);
    }
    for (Thread worker : workers) worker.join();
    long[] all = new long[threads * each];
    for (int t = 0; t < threads; t++) System.arraycopy(got[t], 0, all, t * each, each);
    Arrays.sort(all);
    int repeats = 0;
    for (int i = 1; i < all.length; i++) if (all[i] == all[i - 1]) repeats++;
    System.out.println("{\"name\":\"unique\",\"checked\":" + all.length + ",\"repeats\":" + repeats + "}");
    if (repeats > 0) throw new AssertionError(repeats + " IDs repeated across " + threads + " threads");
  }
}
