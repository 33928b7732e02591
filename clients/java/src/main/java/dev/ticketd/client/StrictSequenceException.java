package dev.ticketd.client;

/** {@code nextNow()} on a strict sequence: each of its IDs comes from ticketd, so none is ever buffered; call {@code next()}. */
public final class StrictSequenceException extends TicketdException {
  private static final long serialVersionUID = 1L;

  public StrictSequenceException(String message) {
    super("TICKETD_CLIENT_STRICT", message, null);
  }

  public StrictSequenceException(String message, Throwable cause) {
    super("TICKETD_CLIENT_STRICT", message, cause);
  }
}
