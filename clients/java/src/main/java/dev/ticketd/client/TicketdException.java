package dev.ticketd.client;

/**
 * Base of the client's exceptions: each carries a literal {@code TICKETD_CLIENT_*} code, the same as
 * the Node client's (ticketd-client) errors. Unchecked, as the client is called where IDs are
 * needed (constructors, lambdas, streams); catch this type, or a subclass, where a caller can act.
 */
public abstract class TicketdException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final String code;

  protected TicketdException(String code, String message, Throwable cause) {
    super(message, cause);
    this.code = code;
  }

  /** The stable code: {@code TICKETD_CLIENT_LEASE_FAILED}, {@code TICKETD_CLIENT_EMPTY}, … */
  public final String code() {
    return code;
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + " (" + code + "): " + getMessage();
  }
}
