package dev.ticketd.client;

/** This process's clock differs from the server's (judged on the monotonic clock since the last renewal) by more than the pool's maxSkewMs. */
public final class ClockSkewException extends TicketdException {
  private static final long serialVersionUID = 1L;

  public ClockSkewException(String message) {
    super("TICKETD_CLIENT_CLOCK_SKEW", message, null);
  }

  public ClockSkewException(String message, Throwable cause) {
    super("TICKETD_CLIENT_CLOCK_SKEW", message, cause);
  }
}
