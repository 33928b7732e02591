package dev.ticketd.client;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;

/**
 * A Snowflake generator whose worker ID is leased from ticketd (ticketd README, "Snowflake worker
 * IDs"), as the Node client's snowflake.ts. An ID is (milliseconds since the epoch, worker ID,
 * sequence). Two rules keep IDs unique:
 *
 * <ul>
 *   <li>Only while a lease is held, judged on the monotonic clock from when the lease was asked for
 *       (so a process paused past its TTL finds its lease over when it wakes), does the generator
 *       open a new millisecond; and only milliseconds above the lease's high-water mark and above
 *       every one it opened before. Earlier holders of the worker ID used none of those.
 *   <li>Its clock must stay within the pool's maxSkewMs of the server's, estimated as the server's
 *       time at the last renewal plus the monotonic time since.
 * </ul>
 *
 * Thread-safe; within a millisecond already opened, an ID costs one clock read and one increment
 * under this object's lock.
 */
public final class Snowflake implements AutoCloseable {
  /** A step back up to this is waited out when the builder gives none. */
  public static final long DEFAULT_MAX_STEP_BACK_MS = 50;
  /** How long next() and ready() wait for a lease when the builder gives no leaseWait. */
  public static final Duration DEFAULT_LEASE_WAIT = Duration.ofSeconds(30);
  private static final double NS_PER_MS = 1_000_000.0;

  private final SnowflakeLayout layout;
  private final long epochMs;
  private final long maxStepBackMs;
  private final SnowflakeClock clock;
  private final Consumer<SnowflakeEvent> emit;
  private final LeaseKeeper lease;
  private final String pool;
  private final long leaseWaitMs;
  private final ExecutorService executor;
  private final ScheduledExecutorService timers;
  // Guarded by this: the millisecond opened last, the next ID in it, and the end of its sequence.
  private long ms = Long.MIN_VALUE;
  private long nextId;
  private long end;
  /** A step back past maxStepBackMs was reported (one clock-back event per step, not per call). */
  private boolean backReported;

  private Snowflake(Builder b) {
    this.layout = b.layout;
    this.epochMs = b.epochMs;
    this.maxStepBackMs = b.maxStepBackMs;
    this.pool = b.pool;
    this.leaseWaitMs = b.leaseWait.toMillis();
    this.clock = b.clock;
    Consumer<SnowflakeEvent> onEvent = b.onEvent;
    this.emit = onEvent == null ? event -> {} : onEvent;
    this.executor = Futures.daemonPool("ticketd-snowflake-" + b.pool);
    this.timers = Executors.newSingleThreadScheduledExecutor(task -> {
      Thread thread = new Thread(task, "ticketd-snowflake-" + b.pool + "-renew");
      thread.setDaemon(true);
      return thread;
    });
    Requests requests = new Requests(b.urls, b.token, b.timeout, b.sslContext, executor);
    this.lease = new LeaseKeeper(new WorkerLease(requests, b.pool), b.holder == null ? defaultHolder() : b.holder, layout.workerBits(), maxStepBackMs, b.renewAfterRatio, clock, emit,
        // Above the earlier holders' last millisecond, and above every one this generator opened.
        highWaterMs -> {
          synchronized (this) {
            ms = Math.max(ms, highWaterMs);
            end = nextId;
          }
        },
        // Nothing more on the lease that ended, not even in the millisecond open now.
        () -> {
          synchronized (this) {
            end = nextId;
          }
        },
        executor, timers);
  }

  /** A builder; {@code urls} and {@code pool} are required. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Takes the lease (once) and returns when IDs can be issued. Waits up to leaseWait for one (a full
   * pool, ticketd restarting), then throws NoLeaseException; a refusal (LeaseFailedException after a
   * 4xx, SnowflakeLayoutException, ClockSkewException) at once.
   */
  public void ready() {
    lease.waitForLease(leaseWaitMs, pool);
  }

  /**
   * The next ID; waits up to leaseWait for a lease (a new one after a pause past the TTL) and for
   * small clock steps back. Throws NoLeaseException when none came in time, ClockSkewException,
   * ClockMovedBackException.
   */
  public long next() {
    synchronized (this) {
      if (clock.wallMillis() == ms && nextId < end) return nextId++;
    }
    for (;;) {
      if (!leaseUsable()) ready();
      long now;
      long until;
      synchronized (this) {
        if (!leaseUsable()) continue;
        now = clock.wallMillis();
        long id;
        try {
          id = issue(now);
        } catch (NoLeaseException e) {
          // The lease ran out between the look above and this one: wait for the next, as above.
          if (lease.closed()) throw e;
          continue;
        }
        if (id >= 0) return id;
        until = ms;
      }
      waitPast(now, until);
    }
  }

  /** False when no lease is held, or the one held ran out on the monotonic clock (a pause past the TTL), which ends it. */
  private synchronized boolean leaseUsable() {
    LeaseKeeper.Held held = lease.held();
    if (held == null) return false;
    if (clock.monoNanos() - held.expiresMono < 0) return true;
    lease.end("lease of worker " + held.workerId + " ran out unrenewed");
    return false;
  }

  /** The next ID without waiting for the network (a small step back is spun out); throws NoLeaseException, ClockMovedBackException or ClockSkewException. */
  public synchronized long nextNow() {
    long now = clock.wallMillis();
    if (now == ms && nextId < end) return nextId++;
    long id = issue(now);
    long spinUntil = clock.monoNanos() + (maxStepBackMs + 2) * 1_000_000L;
    while (id < 0) {
      Thread.onSpinWait();
      // Late is judged before the clock is read again: a thread descheduled past the deadline gets one more look.
      boolean late = clock.monoNanos() - spinUntil > 0;
      id = issue(clock.wallMillis());
      if (id < 0 && late) throw new ClockMovedBackException("the clock has not passed " + Instant.ofEpochMilli(ms) + " (the last timestamp used) within " + maxStepBackMs + " ms");
    }
    return id;
  }

  /** Takes an ID apart by this generator's layout and epoch. */
  public SnowflakeParts decompose(long id) {
    return layout.decompose(id, epochMs);
  }

  /** The worker ID held now, if any. */
  public OptionalInt workerId() {
    LeaseKeeper.Held held = lease.held();
    return held == null ? OptionalInt.empty() : OptionalInt.of(held.workerId);
  }

  /** The clock skew measured against the server at the last lease or renewal (this clock minus the server's). */
  public OptionalLong skewMs() {
    Long skew = lease.skewMs();
    return skew == null ? OptionalLong.empty() : OptionalLong.of(skew);
  }

  public SnowflakeLayout layout() {
    return layout;
  }

  public long epochMs() {
    return epochMs;
  }

  /** Stops renewing and releases the lease with the last timestamp used. */
  @Override
  public void close() {
    lease.close(() -> {
      synchronized (this) {
        return ms == Long.MIN_VALUE ? 0 : ms;
      }
    });
    timers.shutdownNow();
    executor.shutdown();
  }

  /** Waits until the clock passes {@code until}: spun when that is a millisecond or two away, slept otherwise. */
  private void waitPast(long now, long until) {
    long wait = Math.max(1, until - now + 1);
    if (wait > 2) {
      try {
        Thread.sleep(wait);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new NoLeaseException("interrupted while waiting for the clock");
      }
      return;
    }
    while (clock.wallMillis() <= until && clock.wallMillis() >= now) Thread.onSpinWait();
  }

  /** The next ID at wall time {@code now}, or −1 when the clock must first pass the last millisecond opened. Holds the lock. */
  private long issue(long now) {
    LeaseKeeper.Held held = lease.held();
    if (held == null) throw new NoLeaseException("no lease of a worker ID is held (" + lease.ended() + "); next() waits for one");
    long mono = clock.monoNanos();
    if (mono - held.expiresMono >= 0) {
      lease.end("lease of worker " + held.workerId + " ran out unrenewed");
      lease.retake();
      throw new NoLeaseException("the lease of worker " + held.workerId + " ran out before it was renewed; nothing more is issued on it");
    }
    // The server's clock now lies in [serverMs + (mono − answered), serverMs + (mono − asked)].
    // Ahead is judged by the most it may be, behind by the least it surely is: minting above the
    // high-water mark already guards that side, and a slow answer must not read as a clock behind.
    double sinceAnswer = (mono - held.answeredMono) / NS_PER_MS;
    double ahead = now - held.serverMs - sinceAnswer;
    double behind = held.serverMs + sinceAnswer - now;
    if (ahead > held.maxSkewMs || behind > held.maxSkewMs) {
      long skew = Math.round(ahead > held.maxSkewMs ? ahead : -behind);
      emit.accept(new SnowflakeEvent.Skew(skew, held.maxSkewMs));
      throw new ClockSkewException("this clock is " + LeaseKeeper.skewText(skew) + " the server's (limit " + held.maxSkewMs + " ms, the pool's maxSkewMs): nothing is issued until it is back within it");
    }
    if (now > ms) {
      ms = now;
      backReported = false;
      nextId = layout.firstIdOf(now, held.workerId, epochMs);
      end = nextId + (1L << layout.sequenceBits());
      return nextId++;
    }
    // A step back past maxStepBackMs stops it at once: going on with the open millisecond's
    // sequence would freeze the time in its IDs without a word.
    long stepBack = ms - now;
    if (stepBack > maxStepBackMs) {
      if (!backReported) emit.accept(new SnowflakeEvent.ClockBack(stepBack));
      backReported = true;
      throw new ClockMovedBackException("the clock is " + stepBack + " ms behind the last timestamp used (more than maxStepBackMs " + maxStepBackMs + "): nothing is issued until it passes " + Instant.ofEpochMilli(ms));
    }
    // At or a little behind the last millisecond opened: its sequence goes on while it lasts.
    if (nextId < end) return nextId++;
    return -1;
  }

  private static String defaultHolder() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      host = "unknown-host";
    }
    return host + "/" + ProcessHandle.current().pid();
  }

  /** Options of a generator. */
  public static final class Builder {
    private List<String> urls = List.of();
    private String pool;
    private String token;
    private long epochMs = SnowflakeLayout.DEFAULT_EPOCH_MS;
    private SnowflakeLayout layout = SnowflakeLayout.DEFAULT;
    private String holder;
    private long maxStepBackMs = DEFAULT_MAX_STEP_BACK_MS;
    private double renewAfterRatio = 1.0 / 3;
    private Duration timeout;
    private Duration leaseWait = DEFAULT_LEASE_WAIT;
    private SnowflakeClock clock = SnowflakeClock.SYSTEM;
    private Consumer<SnowflakeEvent> onEvent;
    private SSLContext sslContext;

    private Builder() {}

    /** ticketd base URLs (http:// or https://); each call fails over from one to the next. */
    public Builder urls(String... urls) {
      return urls(Arrays.asList(urls));
    }

    public Builder urls(List<String> urls) {
      this.urls = List.copyOf(urls);
      return this;
    }

    /** The worker pool (created by an admin: PUT /v1/worker-pools/{pool}). */
    public Builder pool(String pool) {
      this.pool = pool;
      return this;
    }

    /** A client token of the pool, when ticketd has TICKETD_CLIENT_TOKENS. */
    public Builder token(String token) {
      this.token = token;
      return this;
    }

    /** Unix milliseconds of the IDs' time zero (default 2024-01-01T00:00:00Z). */
    public Builder epochMs(long epochMs) {
      this.epochMs = epochMs;
      return this;
    }

    /** Bit widths (default 41/10/12); workerBits must hold the pool's worker IDs. */
    public Builder layout(SnowflakeLayout layout) {
      this.layout = Objects.requireNonNull(layout, "layout");
      return this;
    }

    /** Shown to operators ({@code ticketd workers}); default host/pid. */
    public Builder holder(String holder) {
      this.holder = holder;
      return this;
    }

    /** A clock step back up to this is waited out; a larger one stops issuing until the clock passes the last timestamp (default 50). */
    public Builder maxStepBackMs(long maxStepBackMs) {
      this.maxStepBackMs = maxStepBackMs;
      return this;
    }

    /** Renew after this fraction of the TTL (default 1/3: two more tries before the lease ends). */
    public Builder renewAfterRatio(double ratio) {
      this.renewAfterRatio = ratio;
      return this;
    }

    /** Per-request timeout (default 2 s). */
    public Builder timeout(Duration timeout) {
      this.timeout = timeout;
      return this;
    }

    /** How long next() and ready() wait for a lease (after a pause, a lost lease, a full pool) before NoLeaseException (default 30 s; zero: one try). */
    public Builder leaseWait(Duration leaseWait) {
      if (leaseWait.isNegative()) throw new IllegalArgumentException("leaseWait must be zero or more, not " + leaseWait);
      this.leaseWait = leaseWait;
      return this;
    }

    public Builder clock(SnowflakeClock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** Called with each event (on the thread that caused it): for logs and metrics. */
    public Builder onEvent(Consumer<SnowflakeEvent> onEvent) {
      this.onEvent = onEvent;
      return this;
    }

    public Builder sslContext(SSLContext sslContext) {
      this.sslContext = sslContext;
      return this;
    }

    /** The generator; the lease is taken by ready() or the first next(). */
    public Snowflake build() {
      if (urls.isEmpty()) throw new NoLeaseException("a Snowflake generator needs at least one ticketd URL");
      Objects.requireNonNull(pool, "pool");
      return new Snowflake(this);
    }
  }
}
