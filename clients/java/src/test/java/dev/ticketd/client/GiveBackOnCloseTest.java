package dev.ticketd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** close() gives the unused IDs of leased blocks back: once, from where the client got to, bounded in time; a failure is reported as lost. */
class GiveBackOnCloseTest {
  /** The body of each return request the stand-in received. */
  private final List<Map<String, Object>> returns = new CopyOnWriteArrayList<>();
  private final AtomicLong tickets = new AtomicLong();

  @SuppressWarnings("unchecked")
  private FakeTicketd.Answer answer(HttpExchange exchange, int returnStatus, boolean leased) {
    if (exchange.getRequestURI().getPath().endsWith("/blocks/return")) {
      try {
        returns.add((Map<String, Object>) Json.parse(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8)));
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
      if (returnStatus != 200) return new FakeTicketd.Answer(returnStatus, "{\"title\":\"refused\",\"code\":\"TICKETD_LEASE_RETURNED\"}");
      return new FakeTicketd.Answer(200, "{\"sequence\":\"s\",\"returned\":\"" + returnedCount(returns.get(returns.size() - 1)) + "\"}");
    }
    long t = tickets.incrementAndGet();
    String lease = leased ? ",\"lease\":\"L" + t + "\"" : "";
    return new FakeTicketd.Answer(200, "{\"sequence\":\"s\",\"first\":\"" + t * 1000 + "\",\"last\":\"" + (t * 1000 + 999) + "\",\"ids\":\"opaque\"" + lease + "}");
  }

  /** How many IDs a return from {@code from} to its lease's last gives back (lease L<t> is block t·1000 .. t·1000 + 999). */
  private static long returnedCount(Map<String, Object> body) {
    long t = Long.parseLong(((String) body.get("lease")).substring(1));
    return t * 1000 + 999 - Long.parseLong((String) body.get("from")) + 1;
  }

  private static TicketClient.Builder client(FakeTicketd fake, List<TicketClientEvent> events) {
    // ordered(true): the stand-in sends no key, and positions are what is given back anyway.
    return TicketClient.builder().urls(fake.url()).sequence("s").ordered(true).onEvent(events::add);
  }

  @Test
  void closeGivesTheRestOfTheBlockBackOnceAndRefusesLaterCalls() throws Exception {
    List<TicketClientEvent> events = new ArrayList<>();
    try (FakeTicketd fake = new FakeTicketd(exchange -> answer(exchange, 200, true))) {
      TicketClient client = client(fake, events).build();
      for (int i = 0; i < 3; i++) assertEquals(1000 + i, client.next());
      client.close();
      client.close();
      assertEquals(List.of(Map.of("lease", "L1", "from", "1003")), returns);
      assertEquals(List.of(new TicketClientEvent.Returned(1003, 1999, 997)), events);
      assertThrows(LeaseFailedException.class, client::next);
    }
  }

  @Test
  void blocksBufferedAheadAreGivenBackWhole() throws Exception {
    List<TicketClientEvent> events = new CopyOnWriteArrayList<>();
    try (FakeTicketd fake = new FakeTicketd(exchange -> answer(exchange, 200, true))) {
      TicketClient client = client(fake, events).build();
      // Past the prefetch point (half the block): the next block is leased ahead.
      for (int i = 0; i < 600; i++) client.next();
      long deadline = System.nanoTime() + 5_000_000_000L;
      while (tickets.get() < 2 && System.nanoTime() < deadline) Thread.sleep(5);
      client.close();
      assertEquals(2, tickets.get());
      assertEquals(List.of(Map.of("lease", "L1", "from", "1600"), Map.of("lease", "L2", "from", "2000")), returns);
      assertEquals(400 + 1000, events.stream().mapToLong(e -> ((TicketClientEvent.Returned) e).count()).sum());
    }
  }

  @Test
  void noIdHandedOutByThreadsRacingCloseIsGivenBack() throws Exception {
    List<TicketClientEvent> events = new CopyOnWriteArrayList<>();
    try (FakeTicketd fake = new FakeTicketd(exchange -> answer(exchange, 200, true))) {
      // Time enough for every block buffered to go back on a loaded machine: this judges what, not how fast.
      TicketClient client = client(fake, events).giveBackTimeout(Duration.ofSeconds(20)).build();
      client.next();
      List<Long> handedOut = new CopyOnWriteArrayList<>();
      CountDownLatch running = new CountDownLatch(4);
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        Thread worker = new Thread(() -> {
          List<Long> mine = new ArrayList<>();
          running.countDown();
          try {
            for (;;) mine.add(client.next());
          } catch (LeaseFailedException closed) {
            handedOut.addAll(mine);
          }
        });
        worker.start();
        workers.add(worker);
      }
      running.await();
      Thread.sleep(20);
      client.close();
      for (Thread worker : workers) worker.join();
      assertTrue(handedOut.size() > 0);
      assertTrue(events.size() > 0);
      long returned = 0;
      for (TicketClientEvent event : events) {
        TicketClientEvent.Returned r = assertInstanceOf(TicketClientEvent.Returned.class, event);
        returned += r.count();
        for (long id : handedOut) assertTrue(id < r.first() || id > r.last(), id + " was handed out and given back in " + r);
      }
      // Every ID leased is either handed out or given back (close took none of them for itself).
      assertEquals(tickets.get() * 1000, handedOut.size() + 1 + returned);
    }
  }

  @Test
  void aRefusedOrLateReturnIsReportedAsLostAndCloseIsBounded() throws Exception {
    List<TicketClientEvent> events = new ArrayList<>();
    try (FakeTicketd fake = new FakeTicketd(exchange -> answer(exchange, 409, true))) {
      TicketClient client = client(fake, events).build();
      client.next();
      client.close();
      TicketClientEvent.ReturnFailed failed = assertInstanceOf(TicketClientEvent.ReturnFailed.class, events.get(0));
      assertEquals(999, failed.count());
      assertEquals(List.of("TICKETD_LEASE_RETURNED"), failed.codes());
      assertEquals(1, returns.size());
    }
    events.clear();
    CountDownLatch hang = new CountDownLatch(1);
    try (FakeTicketd fake = new FakeTicketd(exchange -> {
          if (exchange.getRequestURI().getPath().endsWith("/return")) {
            try {
              hang.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          return answer(exchange, 200, true);
        })) {
      TicketClient client = client(fake, events).urls(fake.url(), fake.url()).giveBackTimeout(Duration.ofMillis(300)).build();
      client.next();
      long began = System.nanoTime();
      client.close();
      long tookMs = (System.nanoTime() - began) / 1_000_000;
      hang.countDown();
      // Unbounded, it would wait for ever: the stand-in answers no return until the test lets it.
      assertTrue(tookMs < 3000, "close took " + tookMs + " ms");
      assertInstanceOf(TicketClientEvent.ReturnFailed.class, events.get(0));
    }
  }

  @Test
  void aBlockWithoutALeaseOrAZeroTimeoutGivesNothingBack() throws Exception {
    List<TicketClientEvent> events = new ArrayList<>();
    try (FakeTicketd fake = new FakeTicketd(exchange -> answer(exchange, 200, false))) {
      TicketClient client = client(fake, events).build();
      client.next();
      client.close();
    }
    try (FakeTicketd fake = new FakeTicketd(exchange -> answer(exchange, 200, true))) {
      TicketClient client = client(fake, events).giveBackTimeout(Duration.ZERO).build();
      client.next();
      client.close();
    }
    assertEquals(List.of(), returns);
    assertEquals(List.of(), events);
  }
}
