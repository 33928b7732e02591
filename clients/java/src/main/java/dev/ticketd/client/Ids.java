package dev.ticketd.client;

import java.math.BigInteger;

/**
 * IDs in a {@code long}. ticketd's IDs go up to 2^64 − 1; a sequence's maxId defaults to 2^63 − 1
 * (Long.MAX_VALUE), so its IDs are plain positive longs. A sequence with a larger maxId hands out
 * IDs above it only to a client built with {@code unsignedIds(true)}, as unsigned 64-bit values in a
 * long (read them with these methods or Long's unsigned ones); any other client refuses them
 * (IdRangeException) rather than hand out a negative number.
 */
public final class Ids {
  private Ids() {}

  /** The ID's decimal value (unsigned), as ticketd writes it. */
  public static String toString(long id) {
    return Long.toUnsignedString(id);
  }

  /** The ID's exact value (unsigned), as the Node client's bigint. */
  public static BigInteger toBigInteger(long id) {
    BigInteger value = BigInteger.valueOf(id & Long.MAX_VALUE);
    return id < 0 ? value.setBit(63) : value;
  }

  /** An ID from its decimal value, up to 2^64 − 1. */
  public static long parse(String decimal) {
    return Long.parseUnsignedLong(decimal);
  }

  /** An ID from ticketd's answer; above Long.MAX_VALUE only when {@code unsigned}. */
  static long parse(String decimal, boolean unsigned, String sequence) {
    long id = Long.parseUnsignedLong(decimal);
    if (id < 0 && !unsigned) throw aboveLong(decimal, sequence);
    return id;
  }

  static IdRangeException aboveLong(String decimal, String sequence) {
    return new IdRangeException("ID " + decimal + " of sequence " + sequence + " is above 2^63 - 1 (Long.MAX_VALUE): build the client with unsignedIds(true) to take IDs as unsigned longs");
  }
}
