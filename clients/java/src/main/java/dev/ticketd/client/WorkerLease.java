package dev.ticketd.client;

import java.util.LinkedHashMap;
import java.util.Map;

/** A worker-ID lease from ticketd's pools: take, renew and release over HTTP (ticketd README, "Snowflake worker IDs"). */
final class WorkerLease {
  /** A lease as ticketd answers it. */
  static final class Answer {
    final String pool;
    final int workerId;
    final String epoch;
    /** How long the lease runs from when the server granted or renewed it. */
    final long expiresInMs;
    /** The server's clock when it answered, in Unix milliseconds. */
    final long serverTimeMs;
    /** Every earlier holder of the worker ID used only timestamps at or below this one. */
    final long highWaterMs;
    final int workerBits;
    final long ttlMs;
    final long maxSkewMs;

    Answer(Map<String, Object> body) {
      pool = Requests.string(body, "pool");
      workerId = (int) Requests.number(body, "workerId");
      epoch = Requests.string(body, "epoch");
      expiresInMs = Requests.number(body, "expiresInMs");
      serverTimeMs = Requests.number(body, "serverTimeMs");
      highWaterMs = Requests.number(body, "highWaterMs");
      workerBits = (int) Requests.number(body, "workerBits");
      ttlMs = Requests.number(body, "ttlMs");
      maxSkewMs = Requests.number(body, "maxSkewMs");
    }
  }

  private final Requests requests;
  private final String pool;
  /** The URL that answered last: the next call starts there. */
  private volatile int preferred;

  WorkerLease(Requests requests, String pool) {
    this.requests = requests;
    this.pool = pool;
  }

  /** Takes a free worker ID of the pool. */
  Answer take(String holder) {
    return new Answer(post("leases", Map.of("holder", holder), "no ticketd leased a worker ID of pool " + pool));
  }

  /** Extends the lease; reports the skew measured at the last renewal. */
  Answer renew(int workerId, String epoch, Long skewMs) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("epoch", epoch);
    if (skewMs != null) body.put("skewMs", skewMs);
    return new Answer(post("leases/" + workerId + "/renew", body, "no ticketd renewed worker " + workerId + " of pool " + pool));
  }

  /** Ends the lease: nothing at or after lastUsedMs + 1 was issued on it. */
  void release(int workerId, String epoch, long lastUsedMs) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("epoch", epoch);
    body.put("lastUsedMs", lastUsedMs);
    post("leases/" + workerId + "/release", body, "no ticketd released worker " + workerId + " of pool " + pool);
  }

  private Map<String, Object> post(String path, Map<String, ?> body, String failure) {
    String json = Json.object(body);
    Requests.Answered<Map<String, Object>> answered = requests.askInTurn(preferred, failure, url ->
        requests.postJson(url + "/v1/worker-pools/" + Requests.segment(pool) + "/" + path, json, b -> true));
    preferred = answered.index;
    return answered.value;
  }

  /** True when ticketd answered that the lease is gone (TICKETD_LEASE_LOST), not that it was out of reach. */
  static boolean isLost(RuntimeException error) {
    return error instanceof LeaseFailedException && ((LeaseFailedException) error).codes().contains("TICKETD_LEASE_LOST");
  }
}
