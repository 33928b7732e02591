package dev.ticketd.client;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * The worker-ID lease of a Snowflake generator: taking it, renewing it every third of its TTL,
 * judging it on the monotonic clock, measuring the clock's skew against the server's, and taking a
 * new one by itself when it ends (as the Node client's lease-keeper.ts). The generator only asks
 * what is held. Callbacks into the generator run without this keeper's lock held.
 */
final class LeaseKeeper {
  /** How long to wait between tries to take a lease after one ended. */
  static final long RETAKE_DELAY_MS = 1000;
  private static final long MS = 1_000_000L;

  /** The lease held, as the generator judges it; replaced whole on renewal, so it is read consistently. */
  static final class Held {
    final int workerId;
    final String epoch;
    final long maxSkewMs;
    final long renewEveryMs;
    /** Monotonic time (ns) after which the lease may be over, counted from when it was asked for. */
    final long expiresMono;
    /** The server's clock as of its answer, which came at monotonic time answeredMono. */
    final long serverMs;
    final long answeredMono;

    Held(int workerId, String epoch, long maxSkewMs, long renewEveryMs, long expiresMono, long serverMs, long answeredMono) {
      this.workerId = workerId;
      this.epoch = epoch;
      this.maxSkewMs = maxSkewMs;
      this.renewEveryMs = renewEveryMs;
      this.expiresMono = expiresMono;
      this.serverMs = serverMs;
      this.answeredMono = answeredMono;
    }

    Held renewed(long expiresMono, long serverMs, long answeredMono) {
      return new Held(workerId, epoch, maxSkewMs, renewEveryMs, expiresMono, serverMs, answeredMono);
    }
  }

  private final WorkerLease requests;
  private final String holder;
  private final int workerBits;
  private final long maxStepBackMs;
  private final double renewRatio;
  private final SnowflakeClock clock;
  private final Consumer<SnowflakeEvent> emit;
  /** A lease is about to be held: IDs from now on lie above this millisecond. */
  private final LongConsumer onLeased;
  /** The lease ended: nothing more may be issued on it. */
  private final Runnable onEnded;
  private final Executor executor;
  private final ScheduledExecutorService timers;

  private volatile Held held;
  private volatile String ended = "no lease taken yet";
  private volatile boolean closed;
  private volatile Long skewMs;
  private CompletableFuture<Void> taking;
  private ScheduledFuture<?> timer;

  LeaseKeeper(WorkerLease requests, String holder, int workerBits, long maxStepBackMs, double renewRatio, SnowflakeClock clock, Consumer<SnowflakeEvent> emit, LongConsumer onLeased, Runnable onEnded, Executor executor, ScheduledExecutorService timers) {
    this.requests = requests;
    this.holder = holder;
    this.workerBits = workerBits;
    this.maxStepBackMs = maxStepBackMs;
    this.renewRatio = renewRatio;
    this.clock = clock;
    this.emit = emit;
    this.onLeased = onLeased;
    this.onEnded = onEnded;
    this.executor = executor;
    this.timers = timers;
  }

  Held held() {
    return held;
  }

  String ended() {
    return ended;
  }

  Long skewMs() {
    return skewMs;
  }

  boolean closed() {
    return closed;
  }

  /** This clock minus the server's, as far as one round trip can tell: 0 when the server's reading fell inside it. */
  static long measuredSkew(long wallAsked, long wallAnswered, long serverMs) {
    if (serverMs < wallAsked) return wallAsked - serverMs;
    if (serverMs > wallAnswered) return wallAnswered - serverMs;
    return 0;
  }

  /** A measured skew in words: "120 ms ahead of" or "40 ms behind". */
  static String skewText(long skewMs) {
    return Math.abs(skewMs) + " ms " + (skewMs > 0 ? "ahead of" : "behind");
  }

  /** Stops renewing and releases the lease with the last millisecond used (read once nothing else can change it). */
  void close(LongSupplier lastUsed) {
    CompletableFuture<Void> pending;
    synchronized (this) {
      closed = true;
      cancelTimer();
      pending = taking;
    }
    if (pending != null) pending.handle((v, e) -> null).join();
    Held h = held;
    end("closed");
    if (h == null) return;
    long lastUsedMs = lastUsed.getAsLong();
    try {
      requests.release(h.workerId, h.epoch, lastUsedMs);
      emit.accept(new SnowflakeEvent.Released(h.workerId, lastUsedMs));
    } catch (RuntimeException e) {
      // Unreleased, the lease simply runs out; its worker ID is free after the reuse delay.
      emit.accept(new SnowflakeEvent.LeaseEnded(h.workerId, "release failed: " + e.getMessage()));
    }
  }

  /** Takes a lease, single-flight; the future completes once it is held (or fails with why not). */
  synchronized CompletableFuture<Void> take() {
    if (taking == null) {
      CompletableFuture<Void> started = CompletableFuture.runAsync(this::takeOnce, executor);
      taking = started;
      started.whenComplete((v, e) -> {
        synchronized (this) {
          if (taking == started) taking = null;
        }
        Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
        if (cause instanceof LeaseFailedException failed && !closed) emit.accept(new SnowflakeEvent.TakeFailed(failed.getMessage(), failed.codes()));
      });
    }
    return taking;
  }

  /**
   * Returns once a lease is held, trying again every RETAKE_DELAY_MS while ticketd may yet grant one
   * (unreachable, restarting, or the pool full: 503 TICKETD_POOL_EXHAUSTED), for up to {@code waitMs};
   * then NoLeaseException with the last failure as its cause. A refusal (a 4xx, a layout or clock the
   * lease cannot be used with) and a closed generator throw at once.
   */
  void waitForLease(long waitMs, String pool) {
    long deadline = clock.monoNanos() + waitMs * 1_000_000L;
    while (held == null) {
      if (closed) throw new NoLeaseException("generator is closed");
      try {
        Futures.await(take());
      } catch (LeaseFailedException e) {
        if (!e.retryable()) throw e;
        long leftMs = (deadline - clock.monoNanos()) / 1_000_000L;
        if (leftMs <= 0) throw new NoLeaseException("no lease of a worker ID of pool " + pool + " within " + waitMs + " ms (leaseWait): " + e.getMessage(), e);
        try {
          Thread.sleep(Math.min(RETAKE_DELAY_MS, leftMs));
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw new NoLeaseException("interrupted while waiting for a lease", e);
        }
      }
    }
  }

  private void takeOnce() {
    long asked = clock.monoNanos();
    long wallAsked = clock.wallMillis();
    WorkerLease.Answer lease = requests.take(holder);
    long answered = clock.monoNanos();
    long skew = measuredSkew(wallAsked, clock.wallMillis(), lease.serverTimeMs);
    skewMs = skew;
    RuntimeException refusal = refusal(lease, skew);
    if (refusal != null || closed) {
      try {
        requests.release(lease.workerId, lease.epoch, lease.highWaterMs);
      } catch (RuntimeException ignored) {
        // It runs out by itself.
      }
      if (refusal != null) throw refusal;
      return;
    }
    // Earlier holders used timestamps up to the high-water mark: start above it.
    long wait = lease.highWaterMs - clock.wallMillis() + 1;
    if (wait > 0) sleep(wait);
    onLeased.accept(lease.highWaterMs);
    Held h = new Held(lease.workerId, lease.epoch, lease.maxSkewMs, Math.max(100, (long) (lease.ttlMs * renewRatio)), asked + lease.expiresInMs * MS, lease.serverTimeMs, answered);
    // Reported before it is held: an observer (a log, a file per lease) sees the lease before any ID issued on it.
    emit.accept(new SnowflakeEvent.Leased(lease.workerId, lease.epoch, lease.expiresInMs, lease.highWaterMs));
    held = h;
    schedule(this::renew, h.renewEveryMs);
  }

  /** Why a lease cannot be used here: the layout cannot hold its worker ID, or this clock is off the server's. */
  private RuntimeException refusal(WorkerLease.Answer lease, long skew) {
    if (lease.workerBits > workerBits) return new SnowflakeLayoutException("pool " + lease.pool + " has " + lease.workerBits + "-bit worker IDs; layout.workerBits is " + workerBits);
    if (Math.abs(skew) > lease.maxSkewMs) {
      emit.accept(new SnowflakeEvent.Skew(skew, lease.maxSkewMs));
      return new ClockSkewException("this clock is " + skewText(skew) + " the server's (limit " + lease.maxSkewMs + " ms, the pool's maxSkewMs); lease given back");
    }
    long wait = lease.highWaterMs - clock.wallMillis();
    if (wait > 2 * lease.maxSkewMs + maxStepBackMs) return new ClockMovedBackException("the worker ID's earlier holders used timestamps " + wait + " ms ahead of this clock; lease given back");
    return null;
  }

  private synchronized void schedule(Runnable task, long ms) {
    cancelTimer();
    if (closed) return;
    timer = timers.schedule(task, ms, TimeUnit.MILLISECONDS);
  }

  private void cancelTimer() {
    if (timer != null) timer.cancel(false);
    timer = null;
  }

  private void renew() {
    Held h = held;
    if (h == null || closed) return;
    long asked = clock.monoNanos();
    long wallAsked = clock.wallMillis();
    try {
      Long skew = skewMs;
      WorkerLease.Answer lease = requests.renew(h.workerId, h.epoch, skew);
      if (held != h) return;
      long answered = clock.monoNanos();
      long measured = measuredSkew(wallAsked, clock.wallMillis(), lease.serverTimeMs);
      skewMs = measured;
      Held renewed = h.renewed(asked + lease.expiresInMs * MS, lease.serverTimeMs, answered);
      synchronized (this) {
        if (held != h) return;
        held = renewed;
      }
      emit.accept(new SnowflakeEvent.Renewed(h.workerId, measured));
      if (Math.abs(measured) > h.maxSkewMs) emit.accept(new SnowflakeEvent.Skew(measured, h.maxSkewMs));
      schedule(this::renew, h.renewEveryMs);
    } catch (RuntimeException error) {
      if (held != h) return;
      if (WorkerLease.isLost(error)) {
        end("ticketd answered that the lease of worker " + h.workerId + " is lost");
        retake();
        return;
      }
      long leftMs = (h.expiresMono - clock.monoNanos()) / MS;
      emit.accept(new SnowflakeEvent.RenewFailed(h.workerId, error.toString(), leftMs));
      if (leftMs <= 0) {
        // Over: an idle generator learns it here rather than at its next ID.
        end("lease of worker " + h.workerId + " ran out unrenewed");
        retake();
        return;
      }
      // Try again while the lease lasts.
      schedule(this::renew, Math.max(50, Math.min(1000, leftMs / 4)));
    }
  }

  /** Ends the lease held: nothing more is issued on it, not even in the millisecond open now. */
  void end(String reason) {
    Held h;
    synchronized (this) {
      h = held;
      held = null;
      ended = reason;
      cancelTimer();
    }
    onEnded.run();
    if (h != null && !closed) emit.accept(new SnowflakeEvent.LeaseEnded(h.workerId, reason));
  }

  /** Takes a new lease in the background, trying again until one is held or the generator is closed. */
  void retake() {
    synchronized (this) {
      if (closed || taking != null) return;
    }
    take().whenComplete((v, error) -> {
      if (error != null) schedule(this::retake, RETAKE_DELAY_MS);
    });
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new NoLeaseException("interrupted while waiting for the lease's high-water mark");
    }
  }
}
