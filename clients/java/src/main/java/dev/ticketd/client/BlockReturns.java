package dev.ticketd.client;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Gives the unused tails of leased blocks back to ticketd ({@code POST /v1/sequences/{name}/blocks/return})
 * when a client closes: each once, each URL at most once, all within one deadline. A tail that is not
 * taken is lost, which only leaves a gap: nothing is retried past the deadline.
 */
final class BlockReturns {
  /** How long close() may spend giving blocks back when the builder gives no timeout. */
  static final java.time.Duration DEFAULT_TIMEOUT = java.time.Duration.ofMillis(1000);

  /** A block's unused IDs from..last (positions in its own range) and the lease that proves it was leased. */
  record Tail(String lease, long from, long last, long count) {
    /** The IDs of a block from position {@code pos} on, or null when none is left or the block cannot be given back. */
    static Tail of(String lease, long first, long size, long pos) {
      if (lease == null || pos >= size) return null;
      return new Tail(lease, first + pos, first + size - 1, size - pos);
    }
  }

  private BlockReturns() {}

  /** Gives each tail back in turn until {@code deadlineNanos} (System.nanoTime()); reports each outcome through {@code emit}. */
  static void giveBack(Requests requests, int preferred, String sequence, List<Tail> tails, long deadlineNanos, Consumer<TicketClientEvent> emit) {
    String path = "/v1/sequences/" + Requests.segment(sequence) + "/blocks/return";
    for (Tail tail : tails) {
      String body = Json.object(Map.of("lease", tail.lease(), "from", Long.toUnsignedString(tail.from())));
      try {
        Requests.Answered<Map<String, Object>> answered = requests.askInTurn(preferred, "no ticketd took back IDs " + Long.toUnsignedString(tail.from()) + ".." + Long.toUnsignedString(tail.last()) + " of " + sequence, url -> {
          long left = deadlineNanos - System.nanoTime();
          if (left <= 0) return Requests.Attempt.failed("no time left (giveBackTimeout)", true, null);
          return requests.postJson(url + path, body, b -> b.get("returned") instanceof String, java.time.Duration.ofNanos(left));
        });
        emit.accept(new TicketClientEvent.Returned(tail.from(), tail.last(), Long.parseUnsignedLong(Requests.string(answered.value, "returned"))));
      } catch (LeaseFailedException | NumberFormatException e) {
        List<String> codes = e instanceof LeaseFailedException ? ((LeaseFailedException) e).codes() : List.of();
        emit.accept(new TicketClientEvent.ReturnFailed(tail.from(), tail.last(), tail.count(), e.getMessage(), codes));
      }
    }
  }
}
