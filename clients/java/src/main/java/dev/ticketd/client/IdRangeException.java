package dev.ticketd.client;

/** An ID above 2^63 − 1 (Long.MAX_VALUE) for a client not built with {@code unsignedIds(true)}: it is refused rather than handed out as a negative long. */
public final class IdRangeException extends TicketdException {
  private static final long serialVersionUID = 1L;

  public IdRangeException(String message) {
    super("TICKETD_CLIENT_ID_RANGE", message, null);
  }

  public IdRangeException(String message, Throwable cause) {
    super("TICKETD_CLIENT_ID_RANGE", message, cause);
  }
}
