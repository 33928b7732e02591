package dev.ticketd.client;

import java.util.List;

/**
 * What a {@link TicketClient} reports to logs and metrics; {@link #type()} is the Node client's name of
 * the event. IDs {@code first}..{@code last} are a leased block's own (ordered) IDs, before any opaque
 * permutation, as unsigned longs (see {@link Ids}).
 */
public sealed interface TicketClientEvent {
  String type();

  /** {@code close()} gave the unused IDs first..last of a leased block back; ticketd counted {@code count} of them. */
  record Returned(long first, long last, long count) implements TicketClientEvent {
    public String type() {
      return "returned";
    }
  }

  /**
   * {@code close()} could not give IDs first..last back ({@code count} of them): they are lost (a gap,
   * never a duplicate). {@code codes} are the servers' problem codes, if any answered.
   */
  record ReturnFailed(long first, long last, long count, String error, List<String> codes) implements TicketClientEvent {
    public String type() {
      return "return-failed";
    }
  }
}
