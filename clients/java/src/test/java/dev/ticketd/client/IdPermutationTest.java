package dev.ticketd.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The permutation is a bijection of its domain, runs equal single calls, and decode inverts encode. */
class IdPermutationTest {
  private static final byte[] KEY = new byte[32];

  static {
    for (int i = 0; i < 32; i++) KEY[i] = (byte) (i * 7 + 1);
  }

  @Test
  void permutesASmallDomainOntoItself() {
    IdPermutation p = new IdPermutation(KEY, 777, 3778, IdScheme.FEISTEL_AES256_V2);
    Set<Long> seen = new HashSet<>();
    long[] run = new long[3001];
    p.encodeRun(778, 3001, run, 0);
    for (long id = 778; id <= 3778; id++) {
      long opaque = p.encode(id);
      assertEquals(run[(int) (id - 778)], opaque);
      assertTrue(opaque > 777 && opaque <= 3778, "outside: " + opaque);
      assertTrue(seen.add(opaque), "repeated: " + opaque);
      assertEquals(id, p.decode(opaque));
    }
  }

  @Test
  void runsAcrossChunksEqualSingleCallsInA64BitDomain() {
    IdPermutation p = new IdPermutation(KEY, BigInteger.ZERO, BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE), IdScheme.FEISTEL_AES256_V2);
    long first = Long.MAX_VALUE - 2500;
    long[] run = new long[5000];
    p.encodeRun(first, 5000, run, 0);
    long[] single = new long[5000];
    for (int i = 0; i < 5000; i += 250) single[i] = p.encode(first + i);
    for (int i = 0; i < 5000; i += 250) assertEquals(single[i], run[i]);
    assertEquals(first + 4999, p.decode(run[4999]));
    assertEquals(-1L, p.decode(p.encode(-1L)), "2^64 − 1 maps inside and back");
  }

  @Test
  void refusesIdsOutsideTheDomainAndBadKeys() {
    IdPermutation p = new IdPermutation(KEY, 1_000_000, Integer.MAX_VALUE, IdScheme.FEISTEL_AES256_V1);
    assertEquals("TICKETD_CLIENT_OPAQUE_ID", assertThrows(OpaqueIdException.class, () -> p.encode(1_000_000)).code());
    assertThrows(OpaqueIdException.class, () -> p.decode(Integer.MAX_VALUE + 1L));
    assertThrows(OpaqueIdException.class, () -> p.encodeRun(Integer.MAX_VALUE - 1L, 3, new long[3], 0));
    assertThrows(OpaqueIdException.class, () -> new IdPermutation(new byte[16], 0, 10, IdScheme.FEISTEL_AES256_V2));
    assertThrows(OpaqueIdException.class, () -> new IdPermutation(KEY, 10, 10, IdScheme.FEISTEL_AES256_V2));
    long[] a = new long[4];
    p.encodeRun(1_000_001, 4, a, 0);
    assertArrayEquals(new long[] {p.encode(1_000_001), p.encode(1_000_002), p.encode(1_000_003), p.encode(1_000_004)}, a);
  }
}
