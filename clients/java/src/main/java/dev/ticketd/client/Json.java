package dev.ticketd.client;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The little JSON the client reads and writes: ticketd's answers (objects of strings, numbers,
 * booleans, arrays) and its small request bodies. Numbers are kept as BigDecimal, so nothing is
 * rounded; IDs arrive as decimal strings anyway.
 */
final class Json {
  private final String text;
  private int at;

  private Json(String text) {
    this.text = text;
  }

  /** Parses a document; throws IllegalArgumentException for one that is not JSON. */
  static Object parse(String text) {
    Json json = new Json(text);
    json.space();
    Object value = json.value();
    json.space();
    if (json.at != text.length()) throw json.error("trailing characters");
    return value;
  }

  /** A JSON object with these members (values: String, Number, Boolean or null). */
  static String object(Map<String, ?> members) {
    StringBuilder out = new StringBuilder("{");
    for (Map.Entry<String, ?> member : members.entrySet()) {
      if (out.length() > 1) out.append(',');
      quote(out, member.getKey());
      out.append(':');
      Object value = member.getValue();
      if (value instanceof String) quote(out, (String) value);
      else out.append(value);
    }
    return out.append('}').toString();
  }

  private static void quote(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') out.append('\\').append(c);
      else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
      else out.append(c);
    }
    out.append('"');
  }

  private Object value() {
    if (at >= text.length()) throw error("unexpected end");
    char c = text.charAt(at);
    switch (c) {
      case '{':
        return object();
      case '[':
        return array();
      case '"':
        return string();
      case 't':
        return literal("true", Boolean.TRUE);
      case 'f':
        return literal("false", Boolean.FALSE);
      case 'n':
        return literal("null", null);
      default:
        return number();
    }
  }

  private Map<String, Object> object() {
    Map<String, Object> members = new LinkedHashMap<>();
    at++;
    space();
    if (peek('}')) return members;
    for (;;) {
      space();
      if (at >= text.length() || text.charAt(at) != '"') throw error("expected a member name");
      String name = string();
      space();
      expect(':');
      space();
      members.put(name, value());
      space();
      if (peek('}')) return members;
      expect(',');
    }
  }

  private List<Object> array() {
    List<Object> items = new ArrayList<>();
    at++;
    space();
    if (peek(']')) return items;
    for (;;) {
      space();
      items.add(value());
      space();
      if (peek(']')) return items;
      expect(',');
    }
  }

  private String string() {
    at++;
    StringBuilder out = new StringBuilder();
    while (at < text.length()) {
      char c = text.charAt(at++);
      if (c == '"') return out.toString();
      if (c != '\\') {
        out.append(c);
        continue;
      }
      if (at >= text.length()) break;
      char e = text.charAt(at++);
      switch (e) {
        case 'b': out.append('\b'); break;
        case 'f': out.append('\f'); break;
        case 'n': out.append('\n'); break;
        case 'r': out.append('\r'); break;
        case 't': out.append('\t'); break;
        case 'u':
          if (at + 4 > text.length()) throw error("short \\u escape");
          out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
          at += 4;
          break;
        default: out.append(e);
      }
    }
    throw error("unterminated string");
  }

  private Object literal(String word, Object value) {
    if (!text.startsWith(word, at)) throw error("unexpected character");
    at += word.length();
    return value;
  }

  private BigDecimal number() {
    int start = at;
    while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) at++;
    if (start == at) throw error("unexpected character");
    try {
      return new BigDecimal(text.substring(start, at));
    } catch (NumberFormatException e) {
      throw error("bad number");
    }
  }

  private boolean peek(char c) {
    if (at < text.length() && text.charAt(at) == c) {
      at++;
      return true;
    }
    return false;
  }

  private void expect(char c) {
    if (!peek(c)) throw error("expected '" + c + "'");
  }

  private void space() {
    while (at < text.length() && Character.isWhitespace(text.charAt(at))) at++;
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("not JSON (" + what + " at " + at + ")");
  }
}
