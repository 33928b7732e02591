package dev.ticketd.client;

/** The clocks a Snowflake generator reads; tests pass their own. */
public interface SnowflakeClock {
  /** Wall-clock Unix milliseconds: what goes into IDs. */
  long wallMillis();

  /** Monotonic nanoseconds: what judges the lease (a paused process finds its lease over when it wakes). */
  long monoNanos();

  /** System.currentTimeMillis and System.nanoTime. */
  SnowflakeClock SYSTEM = new SnowflakeClock() {
    @Override
    public long wallMillis() {
      return System.currentTimeMillis();
    }

    @Override
    public long monoNanos() {
      return System.nanoTime();
    }
  };
}
