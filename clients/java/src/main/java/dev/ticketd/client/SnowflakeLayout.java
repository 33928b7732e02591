package dev.ticketd.client;

import java.time.Instant;

/**
 * The bit layout of Snowflake IDs, most significant first: milliseconds since an epoch, worker ID,
 * sequence within a millisecond. The widths add up to at most 63, so IDs stay positive longs.
 */
public record SnowflakeLayout(int timeBits, int workerBits, int sequenceBits) {
  /** Twitter's layout: 41 bits of milliseconds (69 years), 10 of worker ID, 12 of sequence (4,096 IDs per ms). */
  public static final SnowflakeLayout DEFAULT = new SnowflakeLayout(41, 10, 12);
  /** Default epoch: 2024-01-01T00:00:00Z, in Unix milliseconds. */
  public static final long DEFAULT_EPOCH_MS = 1704067200000L;

  /** Checks the widths (SnowflakeLayoutException names the one that does not fit). */
  public SnowflakeLayout {
    check("timeBits", timeBits);
    check("workerBits", workerBits);
    check("sequenceBits", sequenceBits);
    int total = timeBits + workerBits + sequenceBits;
    if (total > 63) throw new SnowflakeLayoutException("layout adds up to " + total + " bits; at most 63 (timeBits " + timeBits + " + workerBits " + workerBits + " + sequenceBits " + sequenceBits + ")");
    if (timeBits > 48) throw new SnowflakeLayoutException("layout.timeBits is at most 48 (8,900 years of milliseconds); got " + timeBits);
  }

  private static void check(String name, int value) {
    if (value < 1) throw new SnowflakeLayoutException("layout." + name + " must be a positive integer; got " + value);
  }

  /** Takes an ID apart by this layout and the epoch. */
  public SnowflakeParts decompose(long id, long epochMs) {
    return new SnowflakeParts((id >>> (sequenceBits + workerBits)) + epochMs, (int) ((id >>> sequenceBits) & ((1L << workerBits) - 1)), (int) (id & ((1L << sequenceBits) - 1)));
  }

  /** The first ID of a millisecond for a worker; throws SnowflakeLayoutException for a time the layout cannot hold. */
  public long firstIdOf(long ms, int workerId, long epochMs) {
    long since = ms - epochMs;
    if (since < 0 || since >= 1L << timeBits) throw new SnowflakeLayoutException("time " + Instant.ofEpochMilli(ms) + " does not fit " + timeBits + " bits of milliseconds since the epoch " + Instant.ofEpochMilli(epochMs));
    return since << (workerBits + sequenceBits) | (long) workerId << sequenceBits;
  }
}
