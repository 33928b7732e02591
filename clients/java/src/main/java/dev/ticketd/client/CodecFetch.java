package dev.ticketd.client;

import java.math.BigInteger;
import java.util.Base64;
import java.util.Map;

/** Fetching a sequence's codec: its settings, and for an opaque one its key (`GET …/id-key`). */
final class CodecFetch {
  private CodecFetch() {}

  /** Fetches a sequence's codec from one of the URLs (the key of an opaque one needs its own client token). */
  static IdCodec fetch(Requests requests, String sequence) {
    return requests.askInTurn(0, "no ticketd gave the codec of " + sequence, url -> {
      String base = url + "/v1/sequences/" + Requests.segment(sequence);
      Requests.Attempt<Map<String, Object>> settings = requests.getJson(base, body -> true);
      if (!settings.ok()) return settings.asFailure();
      Object ids = settings.value.get("ids");
      if ("ordered".equals(ids)) return Requests.Attempt.ok(IdCodec.ORDERED);
      // Guessing "ordered" for a mode it does not know would hand out IDs another client may hold.
      if (!"opaque".equals(ids)) return Requests.Attempt.failed("sequence " + sequence + " has ids " + ids + ", unknown to this version; upgrade the ticketd Java client", true, null);
      Requests.Attempt<Map<String, Object>> key = requests.getJson(base + "/id-key", b -> b.get("scheme") != null && b.get("startAfter") != null && b.get("maxId") != null);
      if (!key.ok()) return key.asFailure();
      String scheme = Requests.string(key.value, "scheme");
      if (!IdScheme.isKnown(scheme)) return Requests.Attempt.failed("sequence " + sequence + " uses opaque ID scheme \"" + scheme + "\", unknown to this version; upgrade the ticketd Java client", true, null);
      IdScheme known = IdScheme.named(scheme);
      String encoded = Requests.string(key.value, known == IdScheme.FEISTEL_AES256_V1 ? "key" : "schemeKey");
      if (encoded == null) return Requests.Attempt.failed("ticketd sent no key for scheme " + scheme, true, null);
      IdPermutation permutation = new IdPermutation(Base64.getUrlDecoder().decode(encoded), new BigInteger(Requests.string(key.value, "startAfter")), new BigInteger(Requests.string(key.value, "maxId")), known);
      return Requests.Attempt.<IdCodec>ok(new IdCodec.Opaque(permutation));
    }).value;
  }
}
