package dev.ticketd.client.conformance;

import dev.ticketd.client.Ids;
import dev.ticketd.client.IdCodec;
import dev.ticketd.client.Snowflake;
import dev.ticketd.client.TicketClient;
import dev.ticketd.client.TicketdException;
import dev.ticketd.client.LeaseFailedException;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The Java client's side of the conformance scenarios (clients/conformance.md), run against a real
 * ticketd by test/integration/java-client.test.ts. Each mode prints JSON lines on stdout; IDs go to
 * files of 8-byte little-endian values (as test/support/snowflake-holder.mjs writes them), which the
 * test reads to count repeats.
 *
 * <pre>
 *   hand-out &lt;dir&gt; &lt;name&gt;        TicketClient on TICKETD_SEQUENCE from TICKETD_URLS, THREADS threads, until SIGTERM
 *   holder &lt;dir&gt; &lt;name&gt; &lt;pool&gt; &lt;urls&gt; [idsPerTick]   Snowflake holder, one file per lease, until SIGTERM
 *   checks                        opaque decoding, a retired sequence, a strict sequence, an unknown one
 *   close-returns &lt;sequence&gt; &lt;take&gt; &lt;then&gt;   two clients (OPAQUE_TOKEN), each closed: CloseReturns
 * </pre>
 */
public final class Conformance {
  private Conformance() {}

  public static void main(String[] args) throws Exception {
    switch (args.length == 0 ? "" : args[0]) {
      case "hand-out":
        handOut(Path.of(args[1]), args[2]);
        break;
      case "holder":
        holder(Path.of(args[1]), args[2], args[3], args[4], args.length > 5 ? Integer.parseInt(args[5]) : 200, args.length > 6 ? args[6] : "sync", args.length > 7 ? Long.parseLong(args[7]) : -1);
        break;
      case "checks":
        checks();
        break;
      case "close-returns":
        CloseReturns.run(urls(), args[1], System.getenv("OPAQUE_TOKEN"), Integer.parseInt(args[2]), Integer.parseInt(args[3]));
        break;
      default:
        System.err.println("usage: Conformance hand-out|holder|checks|close-returns …");
        System.exit(2);
    }
  }

  /** One JSON line: flat members, strings quoted, numbers and lists as they are. */
  static synchronized void say(String name, String type, Map<String, ?> members) {
    StringBuilder out = new StringBuilder("{\"name\":\"").append(name).append("\",\"at\":").append(System.currentTimeMillis()).append(",\"type\":\"").append(type).append('"');
    for (Map.Entry<String, ?> m : members.entrySet()) {
      out.append(",\"").append(m.getKey()).append("\":");
      Object v = m.getValue();
      if (v instanceof String) out.append('"').append(((String) v).replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ")).append('"');
      else if (v instanceof List) {
        out.append('[');
        List<?> items = (List<?>) v;
        for (int i = 0; i < items.size(); i++) {
          if (i > 0) out.append(',');
          Object item = items.get(i);
          out.append(item instanceof String ? "\"" + item + "\"" : String.valueOf(item));
        }
        out.append(']');
      } else out.append(v);
    }
    System.out.println(out.append('}'));
    System.out.flush();
  }

  private static List<String> urls() {
    return Arrays.asList(System.getenv("TICKETD_URLS").split(","));
  }

  /** Waits for SIGTERM (the JVM's shutdown hook), then lets {@code stop} finish before the JVM exits. */
  private static CountDownLatch onTerm(Runnable stop) {
    CountDownLatch finished = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      stop.run();
      try {
        finished.await();
      } catch (InterruptedException ignored) {
        Thread.currentThread().interrupt();
      }
    }));
    return finished;
  }

  /** A file of 8-byte little-endian IDs, written with one write call per batch (kept if the process is killed). */
  static final class IdFile implements AutoCloseable {
    private final FileOutputStream out;

    IdFile(Path path) throws IOException {
      out = new FileOutputStream(path.toFile(), true);
    }

    synchronized void write(long[] ids, int n) throws IOException {
      ByteBuffer bytes = ByteBuffer.allocate(n * 8).order(ByteOrder.LITTLE_ENDIAN);
      for (int i = 0; i < n; i++) bytes.putLong(ids[i]);
      out.write(bytes.array());
    }

    @Override
    public synchronized void close() throws IOException {
      out.close();
    }
  }

  private static void handOut(Path dir, String name) throws Exception {
    int threads = Integer.parseInt(System.getenv().getOrDefault("THREADS", "2"));
    int perTick = Integer.parseInt(System.getenv().getOrDefault("IDS_PER_TICK", "100"));
    volatileStop = false;
    CountDownLatch finished = onTerm(() -> volatileStop = true);
    AtomicLong count = new AtomicLong();
    Map<String, Integer> errors = new TreeMap<>();
    // TIMEOUT_MS: the per-request timeout, for runs on a machine too loaded for the default.
    TicketClient.Builder builder = TicketClient.builder();
    if (System.getenv("TIMEOUT_MS") != null) builder.timeout(java.time.Duration.ofMillis(Long.parseLong(System.getenv("TIMEOUT_MS"))));
    try (TicketClient client = builder.urls(urls()).sequence(System.getenv("TICKETD_SEQUENCE")).token(System.getenv("TICKETD_TOKEN")).build();
        IdFile file = new IdFile(dir.resolve(name + ".ids"))) {
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        Thread worker = new Thread(() -> {
          long[] batch = new long[perTick];
          while (!volatileStop) {
            int n = 0;
            boolean failed = false;
            try {
              for (; n < perTick; n++) batch[n] = client.next();
            } catch (TicketdException e) {
              failed = true;
              synchronized (errors) {
                errors.merge(e.code() + (e instanceof LeaseFailedException ? ((LeaseFailedException) e).codes() : ""), 1, Integer::sum);
              }
              say(name, "error", Map.of("code", e.code(), "message", e.getMessage()));
            }
            try {
              if (n > 0) file.write(batch, n);
              count.addAndGet(n);
              Thread.sleep(failed ? 100 : 10);
            } catch (IOException | InterruptedException e) {
              return;
            }
          }
        });
        worker.start();
        workers.add(worker);
      }
      say(name, "started", Map.of("threads", threads));
      while (!volatileStop) {
        Thread.sleep(250);
        say(name, "progress", Map.of("count", count.get()));
      }
      for (Thread worker : workers) worker.join();
    }
    synchronized (errors) {
      say(name, "done", Map.of("count", count.get(), "errors", errors.toString()));
    }
    finished.countDown();
  }

  private static volatile boolean volatileStop;

  private static void holder(Path dir, String name, String pool, String urls, int perTick, String mode, long leaseWaitMs) throws Exception {
    volatileStop = false;
    CountDownLatch finished = onTerm(() -> volatileStop = true);
    IdFile[] file = new IdFile[1];
    Snowflake.Builder builder = Snowflake.builder();
    // In sync mode ready() tries once (no wait) unless told otherwise: SIGTERM is never held up by a wait.
    if (leaseWaitMs >= 0) builder.leaseWait(java.time.Duration.ofMillis(leaseWaitMs));
    else if (mode.equals("sync")) builder.leaseWait(java.time.Duration.ZERO);
    Snowflake snowflake = builder.urls(urls.split(",")).pool(pool).holder(name).onEvent(event -> {
      if (event instanceof dev.ticketd.client.SnowflakeEvent.Leased) {
        dev.ticketd.client.SnowflakeEvent.Leased leased = (dev.ticketd.client.SnowflakeEvent.Leased) event;
        synchronized (file) {
          try {
            if (file[0] != null) file[0].close();
            file[0] = new IdFile(dir.resolve(name + "." + leased.workerId() + "." + leased.epoch() + ".ids"));
          } catch (IOException e) {
            throw new IllegalStateException(e);
          }
        }
        say(name, "leased", Map.of("workerId", leased.workerId(), "epoch", leased.epoch(), "highWaterMs", leased.highWaterMs()));
      } else if (event instanceof dev.ticketd.client.SnowflakeEvent.Released) {
        dev.ticketd.client.SnowflakeEvent.Released released = (dev.ticketd.client.SnowflakeEvent.Released) event;
        say(name, "released", Map.of("workerId", released.workerId(), "lastUsedMs", released.lastUsedMs()));
      } else if (event instanceof dev.ticketd.client.SnowflakeEvent.TakeFailed) {
        dev.ticketd.client.SnowflakeEvent.TakeFailed failed = (dev.ticketd.client.SnowflakeEvent.TakeFailed) event;
        say(name, "take-failed", Map.of("codes", failed.codes(), "error", failed.error()));
      } else {
        say(name, event.type(), Map.of("event", event.toString()));
      }
    }).build();
    long[] batch = new long[perTick];
    while (!volatileStop) {
      int n = 0;
      boolean failed = false;
      if (mode.equals("next")) {
        // Each ID is written as it comes, to the file of the lease it came from.
        try {
          for (int i = 0; i < perTick; i++) {
            long id = snowflake.next();
            synchronized (file) {
              file[0].write(new long[] {id}, 1);
            }
          }
        } catch (TicketdException e) {
          failed = true;
          Throwable cause = e.getCause();
          List<String> causeCodes = cause instanceof dev.ticketd.client.LeaseFailedException ? ((dev.ticketd.client.LeaseFailedException) cause).codes() : List.of();
          say(name, "error", Map.of("code", e.code(), "message", String.valueOf(e.getMessage()), "causeCodes", causeCodes));
        }
        Thread.sleep(failed ? 100 : 10);
        continue;
      }
      // Minted and written under the file's lock: a new lease (which opens a new file) waits, so a
      // batch goes to the file of the lease it was minted on.
      try {
        // Outside the file's lock: the leased event (which opens the lease's file) takes it.
        if (snowflake.workerId().isEmpty()) snowflake.ready();
      } catch (TicketdException e) {
        failed = true;
        say(name, "error", Map.of("code", e.code(), "message", String.valueOf(e.getMessage())));
      }
      synchronized (file) {
        try {
          if (!failed) for (; n < perTick; n++) batch[n] = snowflake.nextNow();
        } catch (TicketdException e) {
          failed = true;
          say(name, "error", Map.of("code", e.code(), "message", String.valueOf(e.getMessage())));
        }
        if (n > 0 && file[0] != null) file[0].write(batch, n);
      }
      Thread.sleep(failed ? 100 : 10);
    }
    snowflake.close();
    synchronized (file) {
      if (file[0] != null) file[0].close();
    }
    say(name, "closed", Map.of());
    finished.countDown();
  }

  private static void checks() throws Exception {
    List<String> urls = urls();
    String opaque = System.getenv("OPAQUE_SEQUENCE");
    if (opaque != null) {
      try (TicketClient client = TicketClient.builder().urls(urls).sequence(opaque).token(System.getenv("OPAQUE_TOKEN")).build();
          TicketClient orderedView = TicketClient.builder().urls(urls).sequence(opaque).token(System.getenv("OPAQUE_TOKEN")).ordered(true).build()) {
        int n = Integer.parseInt(System.getenv().getOrDefault("OPAQUE_COUNT", "3000"));
        long[] ids = client.nextBatch(n);
        IdCodec codec = client.codec();
        Set<Long> distinct = new HashSet<>();
        List<String> sample = new ArrayList<>();
        List<String> decoded = new ArrayList<>();
        boolean ascending = true;
        long previous = -1;
        for (int i = 0; i < n; i++) {
          distinct.add(ids[i]);
          long ordered = codec.decode(ids[i]);
          if (codec.encode(ordered) != ids[i]) throw new AssertionError("encode(decode(" + ids[i] + ")) differs");
          if (ordered <= previous) ascending = false;
          previous = ordered;
          if (i % (n / 10) == 0 || i == n - 1) {
            sample.add(Ids.toString(ids[i]));
            decoded.add(Ids.toString(ordered));
          }
        }
        long own = orderedView.next();
        String withoutToken;
        try (TicketClient anonymous = TicketClient.builder().urls(urls).sequence(opaque).build()) {
          anonymous.next();
          withoutToken = "served";
        } catch (LeaseFailedException e) {
          withoutToken = String.join(",", e.codes());
        }
        boolean ok = distinct.size() == n && !withoutToken.equals("served");
        scenario("opaque-decodes-back", ok, "client side: " + distinct.size() + " distinct of " + n + ", encode(decode(id)) == id for all, without the token: " + withoutToken);
        say("checks", "opaque", Map.of("withoutToken", withoutToken,"ids", codec.ids(), "count", n, "distinct", distinct.size(), "decodedAscending", ascending, "sample", sample, "decoded", decoded,
            "orderedViewId", Ids.toString(own), "orderedViewEncoded", Ids.toString(orderedView.codec().encode(own))));
      }
    }
    String wide = System.getenv("WIDE_OPAQUE_SEQUENCE");
    if (wide != null) wideCheck(urls, wide);
    String retired = System.getenv("RETIRED_SEQUENCE");
    if (retired != null) retiredCheck(urls, retired);
    String strict = System.getenv("STRICT_SEQUENCE");
    if (strict != null) strictCheck(urls, strict);
    String unknown = System.getenv("UNKNOWN_SEQUENCE");
    if (unknown != null) {
      try (TicketClient client = TicketClient.builder().urls(urls).sequence(unknown).build()) {
        client.next();
        say("checks", "unknown", Map.of("refused", false));
      } catch (TicketdException e) {
        say("checks", "unknown", Map.of("refused", true, "code", e.code(), "codes", e instanceof LeaseFailedException ? ((LeaseFailedException) e).codes() : List.of(), "message", e.getMessage()));
      }
    }
    say("checks", "done", Map.of());
  }

  /** A line of the conformance list's protocol: {@code SCENARIO <id> ok} or {@code SCENARIO <id> FAILED: why}. */
  static void scenario(String id, boolean ok, String detail) {
    synchronized (Conformance.class) {
      System.out.println("SCENARIO " + id + (ok ? " ok" : " FAILED: " + detail));
      System.out.flush();
    }
    say("checks", "scenario", Map.of("id", id, "ok", ok, "detail", detail));
  }

  /**
   * A client hands IDs out, the sequence is retired (DELETE, with TICKETD_ADMIN_TOKEN), and the
   * client's next lease fails at once with TICKETD_SEQUENCE_RETIRED; the IDs it had leased before
   * (its buffered blocks) still go out, as they were leased before the retirement.
   */
  private static void retiredCheck(List<String> urls, String sequence) throws Exception {
    try (TicketClient client = TicketClient.builder().urls(urls).sequence(sequence).build()) {
      long first = client.next();
      java.net.http.HttpResponse<String> deleted = java.net.http.HttpClient.newHttpClient().send(
          java.net.http.HttpRequest.newBuilder(java.net.URI.create(urls.get(0) + "/v1/sequences/" + sequence)).DELETE().header("authorization", "Bearer " + System.getenv("TICKETD_ADMIN_TOKEN")).build(),
          java.net.http.HttpResponse.BodyHandlers.ofString());
      long after = 0;
      long started = System.nanoTime();
      try {
        while (after < 1_000_000) {
          client.next();
          after++;
        }
        scenario("retired-refused", false, "a million IDs went out after DELETE answered " + deleted.statusCode());
      } catch (TicketdException e) {
        long ms = (System.nanoTime() - started) / 1_000_000;
        List<String> codes = e instanceof LeaseFailedException ? ((LeaseFailedException) e).codes() : List.of();
        boolean ok = deleted.statusCode() == 200 && e.code().equals("TICKETD_CLIENT_LEASE_FAILED") && codes.contains("TICKETD_SEQUENCE_RETIRED");
        scenario("retired-refused", ok, "DELETE answered " + deleted.statusCode() + "; after it " + after + " buffered IDs went out, then " + e.code() + " " + codes + " in " + ms + " ms");
        say("checks", "retired", Map.of("refused", true, "code", e.code(), "codes", codes, "first", Ids.toString(first), "afterDelete", after, "ms", ms));
      }
    }
  }

  /**
   * An opaque sequence whose domain reaches 2^64 − 1: a client of longs refuses its IDs
   * (TICKETD_CLIENT_ID_RANGE) rather than hand out negative numbers; with unsignedIds(true) it hands
   * them out as unsigned longs, printed in decimal for the server to decode.
   */
  private static void wideCheck(List<String> urls, String sequence) {
    String token = System.getenv("OPAQUE_TOKEN");
    String refusal;
    try (TicketClient signed = TicketClient.builder().urls(urls).sequence(sequence).token(token).build()) {
      signed.next();
      refusal = "none";
    } catch (TicketdException e) {
      refusal = e.code();
    }
    try (TicketClient unsigned = TicketClient.builder().urls(urls).sequence(sequence).token(token).unsignedIds(true).build()) {
      List<String> sample = new ArrayList<>();
      List<String> decoded = new ArrayList<>();
      int above = 0;
      for (int i = 0; i < 200; i++) {
        long id = unsigned.next();
        if (id < 0) above++;
        if (i % 20 == 0) {
          sample.add(Ids.toString(id));
          decoded.add(Ids.toString(unsigned.codec().decode(id)));
        }
      }
      say("checks", "wide", Map.of("signedClient", refusal, "above", above, "sample", sample, "decoded", decoded));
    }
  }

  /** Threads calling next() at once on a strict sequence: every ID from ticketd, none twice, each thread's in increasing order. */
  private static void strictCheck(List<String> urls, String sequence) throws Exception {
    try (TicketClient client = TicketClient.builder().urls(urls).sequence(sequence).build()) {
      int threads = 8;
      int each = 40;
      long[][] got = new long[threads][each];
      List<Thread> workers = new ArrayList<>();
      List<Throwable> failures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int me = t;
        Thread worker = new Thread(() -> {
          try {
            for (int i = 0; i < each; i++) got[me][i] = client.next();
          } catch (RuntimeException e) {
            synchronized (failures) {
              failures.add(e);
            }
          }
        });
        worker.start();
        workers.add(worker);
      }
      for (Thread worker : workers) worker.join();
      Set<Long> distinct = new HashSet<>();
      boolean increasing = true;
      for (long[] row : got) {
        for (int i = 0; i < each; i++) {
          distinct.add(row[i]);
          if (i > 0 && row[i] <= row[i - 1]) increasing = false;
        }
      }
      long[] batch = client.nextBatch(1500);
      boolean batchIncreasing = true;
      for (int i = 1; i < batch.length; i++) if (batch[i] <= batch[i - 1]) batchIncreasing = false;
      String refusal;
      try {
        client.nextNow();
        refusal = "none";
      } catch (TicketdException e) {
        refusal = e.code();
      }
      boolean ok = failures.isEmpty() && distinct.size() == threads * each && increasing && batchIncreasing && refusal.equals("TICKETD_CLIENT_STRICT");
      scenario("strict-coalesced", ok, distinct.size() + " distinct of " + threads * each + " from " + threads + " threads, each thread's increasing: " + increasing + ", nextNow: " + refusal);
      say("checks", "strict", Map.of("count", threads * each, "distinct", distinct.size(), "increasingPerThread", increasing, "failures", failures.size(), "batch", batch.length, "batchIncreasing", batchIncreasing, "nextNow", refusal));
    }
  }
}
