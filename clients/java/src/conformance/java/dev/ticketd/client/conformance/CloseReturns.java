package dev.ticketd.client.conformance;

import dev.ticketd.client.IdCodec;
import dev.ticketd.client.Ids;
import dev.ticketd.client.TicketClient;
import dev.ticketd.client.TicketClientEvent;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The close-returns scenario's side: a client with the sequence's token takes a few IDs and is closed,
 * which gives the rest of its blocks back; a second client then takes more and is closed too. Prints,
 * for each client ({@code client}: first, then), a line per close() event ({@code returned},
 * {@code return-failed}) and a {@code taken} line with its IDs and the client's own decoding of them.
 */
final class CloseReturns {
  private CloseReturns() {}

  static void run(List<String> urls, String sequence, String token, int take, int then) {
    takeAndClose(urls, sequence, token, "first", take);
    takeAndClose(urls, sequence, token, "then", then);
    Conformance.say("close-returns", "done", Map.of());
  }

  private static void takeAndClose(List<String> urls, String sequence, String token, String which, int count) {
    List<String> ids = new ArrayList<>();
    List<String> ordered = new ArrayList<>();
    TicketClient client = TicketClient.builder().urls(urls).sequence(sequence).token(token).onEvent(event -> report(which, event)).build();
    long[] batch = client.nextBatch(count);
    IdCodec codec = client.codec();
    for (long id : batch) {
      ids.add(Ids.toString(id));
      ordered.add(Ids.toString(codec.decode(id)));
    }
    client.close();
    Conformance.say("close-returns", "taken", Map.of("client", which, "ids", ids, "ordered", ordered));
  }

  private static void report(String which, TicketClientEvent event) {
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put("client", which);
    if (event instanceof TicketClientEvent.Returned) {
      TicketClientEvent.Returned r = (TicketClientEvent.Returned) event;
      fields.put("first", Ids.toString(r.first()));
      fields.put("last", Ids.toString(r.last()));
      fields.put("count", r.count());
    } else if (event instanceof TicketClientEvent.ReturnFailed) {
      TicketClientEvent.ReturnFailed f = (TicketClientEvent.ReturnFailed) event;
      fields.put("first", Ids.toString(f.first()));
      fields.put("last", Ids.toString(f.last()));
      fields.put("count", f.count());
      fields.put("error", f.error());
      fields.put("codes", f.codes());
    }
    Conformance.say("close-returns", event.type(), fields);
  }
}
