package dev.ticketd.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.Function;

/** A stand-in for ticketd's HTTP answers, on a loopback port, for the client's pure logic (the real one runs in the conformance test). */
final class FakeTicketd implements AutoCloseable {
  /** An answer: status and JSON body. */
  record Answer(int status, String body) {}

  private final HttpServer server;

  FakeTicketd(Function<HttpExchange, Answer> handler) throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(Executors.newCachedThreadPool());
    server.createContext("/", exchange -> {
      Answer answer = handler.apply(exchange);
      byte[] bytes = answer.body().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("content-type", "application/json");
      exchange.sendResponseHeaders(answer.status(), bytes.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    });
    server.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
