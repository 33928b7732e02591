package dev.ticketd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Many threads on one client: every ID once, blocks leased ahead; a strict sequence's calls coalesced into the next request. */
class ConcurrentHandOutTest {
  @Test
  void threadsTakeEveryIdOfTheLeasedBlocksOnce() throws Exception {
    AtomicLong tickets = new AtomicLong();
    try (FakeTicketd fake = new FakeTicketd(exchange -> {
          long t = tickets.incrementAndGet();
          return new FakeTicketd.Answer(200, "{\"sequence\":\"s\",\"first\":\"" + t * 1000 + "\",\"last\":\"" + (t * 1000 + 999) + "\",\"ids\":\"ordered\"}");
        });
        TicketClient client = TicketClient.builder().urls(fake.url()).sequence("s").build()) {
      assertThrows(NoBufferedIdsException.class, client::nextNow);
      int threads = 8;
      int each = 50_000;
      long[][] got = new long[threads][each];
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        long[] mine = got[t];
        Thread worker = new Thread(() -> {
          for (int i = 0; i < each; i++) mine[i] = client.next();
        });
        worker.start();
        workers.add(worker);
      }
      for (Thread worker : workers) worker.join();
      long[] all = Arrays.stream(got).flatMapToLong(Arrays::stream).sorted().toArray();
      for (int i = 1; i < all.length; i++) assertTrue(all[i] != all[i - 1], "repeated " + all[i]);
      // Blocks used up, plus at most the blocks leased ahead.
      assertTrue(tickets.get() <= all.length / 1000 + TicketClient.MAX_BLOCKS_AHEAD + 1, tickets.get() + " blocks leased for " + all.length + " IDs");
    }
  }

  @Test
  void strictCallsMadeWhileARequestIsInFlightShareTheNextRequest() throws Exception {
    List<Integer> counts = new CopyOnWriteArrayList<>();
    CountDownLatch firstArrived = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    AtomicLong next = new AtomicLong(100);
    try (FakeTicketd fake = new FakeTicketd(exchange -> {
          String path = exchange.getRequestURI().getPath();
          if (path.endsWith("/blocks")) return new FakeTicketd.Answer(409, "{\"title\":\"strict\",\"code\":\"TICKETD_STRICT_NO_BLOCKS\"}");
          int count = Integer.parseInt(exchange.getRequestURI().getQuery().replace("count=", ""));
          counts.add(count);
          if (counts.size() == 1) {
            firstArrived.countDown();
            try {
              releaseFirst.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          StringBuilder ids = new StringBuilder();
          for (int i = 0; i < count; i++) ids.append(i == 0 ? "" : ",").append('"').append(next.incrementAndGet()).append('"');
          return new FakeTicketd.Answer(200, "{\"sequence\":\"s\",\"ids\":[" + ids + "]}");
        });
        TicketClient client = TicketClient.builder().urls(fake.url()).sequence("s").build()) {
      long[] firstId = new long[1];
      Thread first = new Thread(() -> firstId[0] = client.next());
      first.start();
      assertTrue(firstArrived.await(10, TimeUnit.SECONDS));
      int waiting = 5;
      long[] later = new long[waiting];
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < waiting; t++) {
        int me = t;
        Thread worker = new Thread(() -> later[me] = client.next());
        worker.start();
        workers.add(worker);
      }
      Thread.sleep(300);
      // None of them joined the request in flight: it asked for one ID only.
      assertEquals(List.of(1), counts);
      releaseFirst.countDown();
      first.join();
      for (Thread worker : workers) worker.join();
      assertEquals(List.of(1, waiting), counts);
      for (long id : later) assertTrue(id > firstId[0], "an ID of the next request is above the one in flight");
      assertEquals("TICKETD_CLIENT_STRICT", assertThrows(StrictSequenceException.class, client::nextNow).code());
    }
  }
}
