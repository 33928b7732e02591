package dev.ticketd.client;

/** What a Snowflake generator reports to logs and metrics; {@link #type()} is the Node client's name of the event. */
public sealed interface SnowflakeEvent {
  String type();

  /** A lease was taken. */
  record Leased(int workerId, String epoch, long expiresInMs, long highWaterMs) implements SnowflakeEvent {
    public String type() {
      return "leased";
    }
  }

  /** The lease was renewed; skewMs is this clock minus the server's. */
  record Renewed(int workerId, long skewMs) implements SnowflakeEvent {
    public String type() {
      return "renewed";
    }
  }

  /** A renewal failed; the lease has leftMs left on the monotonic clock. */
  record RenewFailed(int workerId, String error, long leftMs) implements SnowflakeEvent {
    public String type() {
      return "renew-failed";
    }
  }

  /** A take of a lease failed on every URL (a full pool, ticketd out of reach); codes are the servers' problem codes. */
  record TakeFailed(String error, java.util.List<String> codes) implements SnowflakeEvent {
    public String type() {
      return "take-failed";
    }
  }

  /** The lease ended: nothing more is issued on it. */
  record LeaseEnded(int workerId, String reason) implements SnowflakeEvent {
    public String type() {
      return "lease-ended";
    }
  }

  /** The clock stepped back further than maxStepBackMs. */
  record ClockBack(long behindMs) implements SnowflakeEvent {
    public String type() {
      return "clock-back";
    }
  }

  /** This clock is off the server's by more than the pool's maxSkewMs. */
  record Skew(long skewMs, long limitMs) implements SnowflakeEvent {
    public String type() {
      return "skew";
    }
  }

  /** The lease was released with the last timestamp used. */
  record Released(int workerId, long lastUsedMs) implements SnowflakeEvent {
    public String type() {
      return "released";
    }
  }
}
