package dev.ticketd.client;

/** The Snowflake generator holds no lease now: not taken yet, lost, expired unrenewed, or closed. {@code next()} waits for one; {@code nextNow()} throws this. */
public final class NoLeaseException extends TicketdException {
  private static final long serialVersionUID = 1L;

  public NoLeaseException(String message) {
    super("TICKETD_CLIENT_NO_LEASE", message, null);
  }

  public NoLeaseException(String message, Throwable cause) {
    super("TICKETD_CLIENT_NO_LEASE", message, cause);
  }
}
