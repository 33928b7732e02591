package dev.ticketd.client;

import java.util.List;

/** No ticketd URL leased a block (or a worker ID, or issued a strict sequence's IDs); or the client is closed. */
public final class LeaseFailedException extends TicketdException {
  private static final long serialVersionUID = 1L;
  private final List<String> codes;
  private final boolean retryable;

  public LeaseFailedException(String message) {
    this(message, List.of(), null);
  }

  public LeaseFailedException(String message, List<String> codes, Throwable cause) {
    this(message, codes, cause, false);
  }

  /** {@code retryable}: the last URL asked did not answer or answered a 5xx (a full pool, a restart), so a later try may succeed. */
  public LeaseFailedException(String message, List<String> codes, Throwable cause, boolean retryable) {
    super("TICKETD_CLIENT_LEASE_FAILED", message, cause);
    this.codes = List.copyOf(codes);
    this.retryable = retryable;
  }

  /** True when the last URL asked did not answer or answered a 5xx (a full pool, a restart): a later try may succeed; false after a refusal (a 4xx). */
  public boolean retryable() {
    return retryable;
  }

  /** The problem codes the servers answered with ({@code TICKETD_POOL_EXHAUSTED}, {@code TICKETD_LEASE_LOST}, …). */
  public List<String> codes() {
    return codes;
  }
}
