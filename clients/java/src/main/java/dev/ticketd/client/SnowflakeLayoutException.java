package dev.ticketd.client;

/** A Snowflake layout or epoch that cannot hold the pool's worker IDs or today's time. */
public final class SnowflakeLayoutException extends TicketdException {
  private static final long serialVersionUID = 1L;

  public SnowflakeLayoutException(String message) {
    super("TICKETD_CLIENT_SNOWFLAKE_LAYOUT", message, null);
  }

  public SnowflakeLayoutException(String message, Throwable cause) {
    super("TICKETD_CLIENT_SNOWFLAKE_LAYOUT", message, cause);
  }
}
