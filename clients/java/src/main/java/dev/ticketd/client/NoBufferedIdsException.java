package dev.ticketd.client;

/** No ID is buffered for {@link TicketClient#nextNow()}; call {@link TicketClient#next()} (which waits for a lease) instead. */
public final class NoBufferedIdsException extends TicketdException {
  private static final long serialVersionUID = 1L;

  public NoBufferedIdsException(String message) {
    super("TICKETD_CLIENT_EMPTY", message, null);
  }

  public NoBufferedIdsException(String message, Throwable cause) {
    super("TICKETD_CLIENT_EMPTY", message, cause);
  }
}
