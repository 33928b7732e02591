package dev.ticketd.client;

/** A key or an ID that an opaque sequence's permutation cannot take (wrong length, outside the domain, unknown scheme). */
public final class OpaqueIdException extends TicketdException {
  private static final long serialVersionUID = 1L;

  public OpaqueIdException(String message) {
    super("TICKETD_CLIENT_OPAQUE_ID", message, null);
  }

  public OpaqueIdException(String message, Throwable cause) {
    super("TICKETD_CLIENT_OPAQUE_ID", message, cause);
  }
}
