package dev.ticketd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The shared test vectors (clients/vectors, generated from the TypeScript client): identical outputs, identical refusals. */
class VectorsTest {
  @SuppressWarnings("unchecked")
  private static Map<String, Object> load(String name) throws IOException {
    String dir = System.getProperty("ticketd.vectors", "../vectors");
    Path file = Path.of(dir, name);
    assertTrue(Files.exists(file), "shared vectors missing: " + file.toAbsolutePath());
    return (Map<String, Object>) Json.parse(Files.readString(file));
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> list(Map<String, Object> m, String key) {
    return (List<Map<String, Object>>) m.get(key);
  }

  @Test
  @SuppressWarnings("unchecked")
  void permutationMatchesTheTypeScriptOne() throws IOException {
    Map<String, Object> vectors = load("permutation.json");
    int pairs = 0;
    for (Map<String, Object> c : list(vectors, "cases")) {
      IdScheme scheme = IdScheme.named((String) c.get("scheme"));
      IdPermutation p = new IdPermutation(Base64.getUrlDecoder().decode((String) c.get("key")), new BigInteger((String) c.get("startAfter")), new BigInteger((String) c.get("maxId")), scheme);
      String where = c.get("scheme") + " " + c.get("domain");
      for (List<String> pair : (List<List<String>>) c.get("pairs")) {
        assertEquals(pair.get(1), Ids.toString(p.encode(Ids.parse(pair.get(0)))), where + " encode " + pair.get(0));
        assertEquals(pair.get(0), Ids.toString(p.decode(Ids.parse(pair.get(1)))), where + " decode " + pair.get(1));
        pairs++;
      }
      Map<String, Object> run = (Map<String, Object>) c.get("run");
      List<String> opaque = (List<String>) run.get("opaque");
      long[] out = new long[opaque.size() + 3];
      p.encodeRun(Ids.parse((String) run.get("first")), opaque.size(), out, 3);
      for (int i = 0; i < opaque.size(); i++) assertEquals(opaque.get(i), Ids.toString(out[i + 3]), where + " run at " + i);
      for (String outside : (List<String>) c.get("outside")) {
        OpaqueIdException e = assertThrows(OpaqueIdException.class, () -> p.encode(Ids.parse(outside)), where + " outside " + outside);
        assertEquals("TICKETD_CLIENT_OPAQUE_ID", e.code());
        assertThrows(OpaqueIdException.class, () -> p.decode(Ids.parse(outside)));
      }
    }
    assertTrue(pairs > 1000, "only " + pairs + " pairs checked");
  }

  @Test
  @SuppressWarnings("unchecked")
  void permutationRefusesWhatTheTypeScriptOneRefuses() throws IOException {
    Map<String, Object> refused = (Map<String, Object>) load("permutation.json").get("refused");
    byte[] key = new byte[32];
    for (Map<String, Object> k : list(refused, "keys")) {
      OpaqueIdException e = assertThrows(OpaqueIdException.class, () -> new IdPermutation(Base64.getUrlDecoder().decode((String) k.get("key")), BigInteger.ZERO, BigInteger.TEN, IdScheme.FEISTEL_AES256_V2));
      assertEquals(k.get("code"), e.code());
    }
    for (Map<String, Object> d : list(refused, "domains")) {
      OpaqueIdException e = assertThrows(OpaqueIdException.class, () -> new IdPermutation(key, new BigInteger((String) d.get("startAfter")), new BigInteger((String) d.get("maxId")), IdScheme.FEISTEL_AES256_V2));
      assertEquals(d.get("code"), e.code());
    }
    for (String name : (List<String>) refused.get("schemes")) assertEquals("TICKETD_CLIENT_OPAQUE_ID", assertThrows(OpaqueIdException.class, () -> IdScheme.named(name)).code());
  }

  @Test
  @SuppressWarnings("unchecked")
  void snowflakeLayoutsMatch() throws IOException {
    Map<String, Object> vectors = load("snowflake.json");
    assertEquals(((BigDecimal) vectors.get("defaultEpochMs")).longValueExact(), SnowflakeLayout.DEFAULT_EPOCH_MS);
    assertEquals(layoutOf((Map<String, Object>) vectors.get("defaultLayout")), SnowflakeLayout.DEFAULT);
    for (Map<String, Object> c : list(vectors, "cases")) {
      SnowflakeLayout layout = layoutOf((Map<String, Object>) c.get("given"));
      assertEquals(layoutOf((Map<String, Object>) c.get("layout")), layout);
      long epoch = ((BigDecimal) c.get("epochMs")).longValueExact();
      for (Map<String, Object> id : list(c, "ids")) {
        long ms = ((BigDecimal) id.get("timestampMs")).longValueExact();
        int worker = ((BigDecimal) id.get("workerId")).intValueExact();
        int seq = ((BigDecimal) id.get("sequence")).intValueExact();
        long expected = Long.parseLong((String) id.get("id"));
        assertEquals(expected, layout.firstIdOf(ms, worker, epoch) + seq, layout + " " + id);
        assertEquals(new SnowflakeParts(ms, worker, seq), layout.decompose(expected, epoch));
      }
      for (Map<String, Object> outside : list(c, "outside")) {
        long ms = ((BigDecimal) outside.get("timestampMs")).longValueExact();
        assertEquals(outside.get("code"), assertThrows(SnowflakeLayoutException.class, () -> layout.firstIdOf(ms, 0, epoch)).code());
      }
    }
    for (Map<String, Object> r : list(vectors, "refusedLayouts")) {
      assertEquals(r.get("code"), assertThrows(TicketdException.class, () -> layoutOf((Map<String, Object>) r.get("given"))).code(), String.valueOf(r.get("given")));
    }
  }

  @Test
  @SuppressWarnings("unchecked")
  void errorCodesMatch() throws IOException {
    Map<String, Object> codes = (Map<String, Object>) load("errors.json").get("codes");
    Map<String, TicketdException> ours = Map.of(
        "NoBufferedIdsError", new NoBufferedIdsException(""), "StrictSequenceError", new StrictSequenceException(""), "LeaseFailedError", new LeaseFailedException(""),
        "OpaqueIdError", new OpaqueIdException(""), "NoLeaseError", new NoLeaseException(""), "ClockMovedBackError", new ClockMovedBackException(""),
        "ClockSkewError", new ClockSkewException(""), "SnowflakeLayoutError", new SnowflakeLayoutException(""));
    assertEquals(codes.keySet(), ours.keySet());
    for (Map.Entry<String, Object> e : codes.entrySet()) assertEquals(e.getValue(), ours.get(e.getKey()).code(), e.getKey());
  }

  /** A layout from the vectors' `given`, completed with the default widths; a width that is not an int is refused as the TS one refuses it. */
  private static SnowflakeLayout layoutOf(Map<String, Object> given) {
    return new SnowflakeLayout(width(given, "timeBits", 41), width(given, "workerBits", 10), width(given, "sequenceBits", 12));
  }

  private static int width(Map<String, Object> given, String name, int fallback) {
    Object v = given.get(name);
    if (v == null) return fallback;
    try {
      return ((BigDecimal) v).intValueExact();
    } catch (ArithmeticException | ClassCastException e) {
      throw new SnowflakeLayoutException("layout." + name + " must be a positive integer; got " + v);
    }
  }
}
