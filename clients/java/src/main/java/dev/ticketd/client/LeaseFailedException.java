package dev.ticketd.client;

import java.util.List;

/** No ticketd URL leased a block (or a worker ID, or issued a strict sequence's IDs); or the client is closed. */
public final class LeaseFailedException extends TicketdException {
  private static final long serialVersionUID = 1L;
  private final List<String> codes;

  public LeaseFailedException(String message) {
    this(message, List.of(), null);
  }

  public LeaseFailedException(String message, List<String> codes, Throwable cause) {
    super("TICKETD_CLIENT_LEASE_FAILED", message, cause);
    this.codes = List.copyOf(codes);
  }

  /** The problem codes the servers answered with ({@code TICKETD_POOL_EXHAUSTED}, {@code TICKETD_LEASE_LOST}, …). */
  public List<String> codes() {
    return codes;
  }
}
