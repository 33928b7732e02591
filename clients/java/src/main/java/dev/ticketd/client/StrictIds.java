package dev.ticketd.client;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * A strict sequence's IDs, asked for from ticketd each time (docs/strict-sequences.md): no block is
 * ever buffered, since IDs served from a client's own block would leave real-time order.
 *
 * <p>Calls made while a request is in flight wait for the next one, which asks for all of them at
 * once (coalesced). They never join the request in flight: it was sent before they were made, and
 * an answer given elsewhere since may hold greater IDs than its own.
 */
final class StrictIds {
  /** The problem code of {@code POST …/blocks} for a strict sequence. */
  static final String STRICT_NO_BLOCKS = "TICKETD_STRICT_NO_BLOCKS";
  /** Most IDs one request asks for (ticketd's TICKETD_MAX_COUNT is 10000 unless set lower). */
  static final int MAX_PER_REQUEST = 1000;

  /** A call waiting for its IDs. */
  private static final class Waiter {
    final int count;
    final CompletableFuture<long[]> ids = new CompletableFuture<>();

    Waiter(int count) {
      this.count = count;
    }
  }

  private final Requests requests;
  private final String sequence;
  private final boolean unsigned;
  private final Executor executor;
  private final Deque<Waiter> waiting = new ArrayDeque<>();
  private boolean inFlight;
  private boolean closed;
  /** The URL that answered last: requests start there. */
  private volatile int preferred;

  StrictIds(Requests requests, String sequence, boolean unsigned, Executor executor) {
    this.requests = requests;
    this.sequence = sequence;
    this.unsigned = unsigned;
    this.executor = executor;
  }

  /** One ID, from the next request sent. */
  long next() {
    return ask(1)[0];
  }

  /** {@code count} IDs in increasing order, in requests of at most MAX_PER_REQUEST, each sent once the one before is answered. */
  long[] batch(int count) {
    long[] ids = new long[count];
    for (int done = 0; done < count; done += MAX_PER_REQUEST) {
      long[] part = ask(Math.min(count - done, MAX_PER_REQUEST));
      System.arraycopy(part, 0, ids, done, part.length);
    }
    return ids;
  }

  /** nextNow() on a strict sequence. */
  StrictSequenceException refusal() {
    return new StrictSequenceException("sequence " + sequence + " is strict: each ID comes from ticketd, none is buffered; call next()");
  }

  /** Refuses the calls still waiting; the request in flight is answered to nobody. */
  void close() {
    List<Waiter> refused;
    synchronized (this) {
      closed = true;
      refused = new ArrayList<>(waiting);
      waiting.clear();
    }
    for (Waiter waiter : refused) waiter.ids.completeExceptionally(new LeaseFailedException("client is closed"));
  }

  private long[] ask(int count) {
    Waiter waiter = new Waiter(count);
    synchronized (this) {
      if (closed) throw new LeaseFailedException("client is closed");
      waiting.add(waiter);
      send();
    }
    return Futures.await(waiter.ids);
  }

  /** Sends one request for the calls waiting (as many as fit in one), unless one is in flight. Holds the lock. */
  private void send() {
    if (inFlight || waiting.isEmpty()) return;
    List<Waiter> taken = new ArrayList<>();
    int total = 0;
    while (!waiting.isEmpty() && total + waiting.peek().count <= MAX_PER_REQUEST) {
      Waiter waiter = waiting.poll();
      total += waiter.count;
      taken.add(waiter);
    }
    inFlight = true;
    int count = total;
    executor.execute(() -> {
      try {
        long[] ids = request(count);
        int at = 0;
        for (Waiter waiter : taken) {
          long[] part = new long[waiter.count];
          System.arraycopy(ids, at, part, 0, waiter.count);
          at += waiter.count;
          waiter.ids.complete(part);
        }
      } catch (RuntimeException e) {
        for (Waiter waiter : taken) waiter.ids.completeExceptionally(e);
      } finally {
        synchronized (this) {
          inFlight = false;
          if (!closed) send();
        }
      }
    });
  }

  private long[] request(int count) {
    Requests.Answered<Map<String, Object>> answered = requests.askInTurn(preferred, "no ticketd issued IDs of strict sequence " + sequence, url ->
        requests.postJson(url + "/v1/sequences/" + Requests.segment(sequence) + "/ids?count=" + count, null, b -> b.get("ids") instanceof List && ((List<?>) b.get("ids")).size() == count));
    preferred = answered.index;
    List<?> ids = (List<?>) answered.value.get("ids");
    long[] out = new long[count];
    for (int i = 0; i < count; i++) out[i] = Ids.parse((String) ids.get(i), unsigned, sequence);
    return out;
  }
}
