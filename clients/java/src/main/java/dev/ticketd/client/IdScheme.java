package dev.ticketd.client;

import java.util.Map;

/**
 * The opaque-ID permutation schemes, by the name stored beside each key (as the Node client's
 * id-scheme.ts). A sequence's scheme never changes; {@code tag} is written into every AES block, so
 * the round functions of two schemes never coincide.
 */
public enum IdScheme {
  /** ticketd 0.4: 8 Feistel rounds (FF3-1's count). Kept, exactly, for the sequences made with it. */
  FEISTEL_AES256_V1("feistel-aes256-v1", 8, 0),
  /** From ticketd 0.5: 10 rounds, FF1's count. */
  FEISTEL_AES256_V2("feistel-aes256-v2", 10, 2);

  /** Bytes of a sequence key. */
  public static final int KEY_BYTES = 32;

  private static final Map<String, IdScheme> BY_NAME = Map.of(FEISTEL_AES256_V1.schemeName, FEISTEL_AES256_V1, FEISTEL_AES256_V2.schemeName, FEISTEL_AES256_V2);

  private final String schemeName;
  private final int rounds;
  private final int tag;

  IdScheme(String schemeName, int rounds, int tag) {
    this.schemeName = schemeName;
    this.rounds = rounds;
    this.tag = tag;
  }

  /** The name ticketd stores and sends ({@code feistel-aes256-v2}). */
  public String schemeName() {
    return schemeName;
  }

  public int rounds() {
    return rounds;
  }

  public int tag() {
    return tag;
  }

  /** True for a scheme this client knows. */
  public static boolean isKnown(String name) {
    return BY_NAME.containsKey(name);
  }

  /** The scheme of that name; throws OpaqueIdException for one this version does not know. */
  public static IdScheme named(String name) {
    IdScheme scheme = BY_NAME.get(name);
    if (scheme == null) throw new OpaqueIdException("opaque ID scheme \"" + name + "\" is unknown to this version (it knows feistel-aes256-v1, feistel-aes256-v2); upgrade the ticketd Java client");
    return scheme;
  }
}
