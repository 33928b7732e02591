package dev.ticketd.client;

/** The clock went back further than maxStepBackMs below the last timestamp used: nothing is issued until it passes it again. */
public final class ClockMovedBackException extends TicketdException {
  private static final long serialVersionUID = 1L;

  public ClockMovedBackException(String message) {
    super("TICKETD_CLIENT_CLOCK_BACK", message, null);
  }

  public ClockMovedBackException(String message, Throwable cause) {
    super("TICKETD_CLIENT_CLOCK_BACK", message, cause);
  }
}
