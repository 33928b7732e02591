package dev.ticketd.client;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.function.Predicate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;

/** The client's requests to ticketd: each URL in turn, JSON answers, headers and timeouts. */
final class Requests {
  /** Per-request timeout when the builder gives none. */
  static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(2000);

  /** What one URL answered: a value, or why not and whether another URL would answer the same. */
  static final class Attempt<T> {
    final T value;
    final String error;
    final boolean isFinal;
    final String code;

    private Attempt(T value, String error, boolean isFinal, String code) {
      this.value = value;
      this.error = error;
      this.isFinal = isFinal;
      this.code = code;
    }

    static <T> Attempt<T> ok(T value) {
      return new Attempt<>(value, null, false, null);
    }

    static <T> Attempt<T> failed(String error, boolean isFinal, String code) {
      return new Attempt<>(null, error, isFinal, code);
    }

    boolean ok() {
      return error == null;
    }

    <U> Attempt<U> asFailure() {
      return new Attempt<>(null, error, isFinal, code);
    }
  }

  /** One URL's answer to a question. */
  interface Ask<T> {
    Attempt<T> ask(String url) throws IOException, InterruptedException;
  }

  /** The value, and the index of the URL that gave it. */
  static final class Answered<T> {
    final T value;
    final int index;

    Answered(T value, int index) {
      this.value = value;
      this.index = index;
    }
  }

  private final List<String> urls;
  private final String token;
  private final Duration timeout;
  private final HttpClient http;

  Requests(List<String> urls, String token, Duration timeout, SSLContext ssl, Executor executor) {
    this.urls = List.copyOf(urls);
    this.token = token;
    this.timeout = timeout == null ? DEFAULT_TIMEOUT : timeout;
    HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(this.timeout).executor(executor);
    if (ssl != null) builder.sslContext(ssl);
    this.http = builder.build();
  }

  List<String> urls() {
    return urls;
  }

  /**
   * Asks the URLs in turn from {@code start}, each once, until one answers: a final refusal stops, a
   * 5xx or a network error moves on. Throws LeaseFailedException with every URL's reason.
   */
  <T> Answered<T> askInTurn(int start, String failure, Ask<T> ask) {
    List<String> errors = new ArrayList<>();
    List<String> codes = new ArrayList<>();
    Exception last = null;
    boolean retryable = true;
    for (int attempt = 0; attempt < urls.size(); attempt++) {
      int index = (start + attempt) % urls.size();
      String url = urls.get(index);
      try {
        Attempt<T> answer = ask.ask(url);
        if (answer.ok()) return new Answered<>(answer.value, index);
        errors.add(url + ": " + answer.error);
        if (answer.code != null) codes.add(answer.code);
        if (answer.isFinal) {
          retryable = false;
          break;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new LeaseFailedException(failure + ": interrupted", codes, e);
      } catch (IOException | RuntimeException e) {
        last = e;
        errors.add(url + ": " + networkReason(e));
      }
    }
    throw new LeaseFailedException(failure + ": " + String.join("; ", errors), codes, last, retryable);
  }

  /** Why a request got no answer, in words a newcomer can act on. */
  static String networkReason(Throwable error) {
    if (error instanceof HttpConnectTimeoutException) return "no connection in time (timeoutMs)";
    if (error instanceof HttpTimeoutException) return "no answer in time (timeoutMs)";
    if (error instanceof ConnectException) return "connection refused: nothing listens there: is ticketd running on that port?";
    if (error instanceof UnknownHostException) return "no such host: " + error.getMessage();
    if (error instanceof ClosedChannelException) return "the connection was closed while asking";
    if (error instanceof SSLException) return "TLS: " + error.getMessage();
    if (error instanceof TicketdException) return error.getMessage();
    String message = error.getMessage();
    return error.getClass().getSimpleName() + (message == null ? "" : ": " + message);
  }

  /** A request with the client's headers and timeout. */
  HttpRequest.Builder request(String url) {
    HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(url)).timeout(timeout).header("accept", "application/json");
    if (token != null) builder.header("authorization", "Bearer " + token);
    return builder;
  }

  /** GET a JSON object. */
  Attempt<Map<String, Object>> getJson(String url, Predicate<Map<String, Object>> complete) throws IOException, InterruptedException {
    return send(request(url).GET().build(), complete);
  }

  /** POST a JSON body (null: none) and read a JSON object. */
  Attempt<Map<String, Object>> postJson(String url, String body, Predicate<Map<String, Object>> complete) throws IOException, InterruptedException {
    return postJson(url, body, complete, timeout);
  }

  /** The same within {@code within} (a give-back on close shares one deadline across its requests). */
  Attempt<Map<String, Object>> postJson(String url, String body, Predicate<Map<String, Object>> complete, Duration within) throws IOException, InterruptedException {
    HttpRequest.Builder builder = request(url).timeout(within.compareTo(timeout) < 0 ? within : timeout);
    if (body == null) builder.POST(HttpRequest.BodyPublishers.noBody());
    else builder.header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
    return send(builder.build(), complete);
  }

  /** The JSON body of a 200 that {@code complete} accepts; otherwise the status, the problem's title and its detail. */
  @SuppressWarnings("unchecked")
  private Attempt<Map<String, Object>> send(HttpRequest request, Predicate<Map<String, Object>> complete) throws IOException, InterruptedException {
    HttpResponse<String> res = http.send(request, HttpResponse.BodyHandlers.ofString());
    String text = res.body();
    Map<String, Object> body = null;
    try {
      Object parsed = Json.parse(text);
      if (parsed instanceof Map) body = (Map<String, Object>) parsed;
    } catch (IllegalArgumentException notJson) {
      body = null;
    }
    int status = res.statusCode();
    if (status == 200 && body != null && complete.test(body)) return Attempt.ok(body);
    String title = body != null && body.get("title") instanceof String ? (String) body.get("title") : "HTTP " + status;
    String detail = body == null ? "not JSON: " + quoted(text) : body.get("detail") instanceof String ? (String) body.get("detail") : "";
    String code = body != null && body.get("code") instanceof String ? (String) body.get("code") : null;
    // A 4xx (unknown sequence, bad name, exhausted, no token) is the same everywhere: do not fail over.
    return Attempt.failed(status + " " + title + (detail.isEmpty() ? "" : ": " + detail), status < 500, code);
  }

  private static String quoted(String text) {
    String head = text.length() > 80 ? text.substring(0, 80) : text;
    return '"' + head.replace("\"", "\\\"").replace("\n", "\\n") + '"';
  }

  /** A name as one path segment (ticketd itself judges whether the name is valid). */
  static String segment(String name) {
    return java.net.URLEncoder.encode(name, java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** A string member, or null. */
  static String string(Map<String, Object> body, String name) {
    Object value = body.get(name);
    return value instanceof String ? (String) value : null;
  }

  /** A numeric member as a long; throws for one missing. */
  static long number(Map<String, Object> body, String name) {
    Object value = body.get(name);
    if (value instanceof java.math.BigDecimal) return ((java.math.BigDecimal) value).longValue();
    if (value instanceof String) return Long.parseLong((String) value);
    throw new IllegalArgumentException("answer has no number " + name);
  }
}
