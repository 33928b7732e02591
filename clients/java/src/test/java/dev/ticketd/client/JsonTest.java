package dev.ticketd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
  @Test
  void readsTicketdAnswersExactly() {
    Object parsed = Json.parse("{\"sequence\":\"a\",\"ids\":[\"18446744073709551615\"],\"n\":1704067200000,\"ok\":true,\"x\":null,\"s\":\"\\u00e9\\\"\"}");
    Map<?, ?> m = (Map<?, ?>) parsed;
    assertEquals(List.of("18446744073709551615"), m.get("ids"));
    assertEquals(new BigDecimal("1704067200000"), m.get("n"));
    assertEquals(Boolean.TRUE, m.get("ok"));
    assertEquals("é\"", m.get("s"));
    assertThrows(IllegalArgumentException.class, () -> Json.parse("<html>"));
    assertThrows(IllegalArgumentException.class, () -> Json.parse("{\"a\":1} x"));
  }

  @Test
  void writesRequestBodies() {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("holder", "h\"1");
    body.put("lastUsedMs", 12L);
    assertEquals("{\"holder\":\"h\\\"1\",\"lastUsedMs\":12}", Json.object(body));
  }
}
