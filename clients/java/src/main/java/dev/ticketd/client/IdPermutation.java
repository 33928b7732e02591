package dev.ticketd.client;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import javax.crypto.Cipher;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.SecretKeySpec;

/**
 * Opaque IDs: a keyed permutation P of a sequence's ID domain (startAfter, maxId] onto itself, the
 * same function as the Node client's id-permutation.ts (docs/opaque-ids.md states it exactly, and
 * clients/vectors holds its outputs). The ID's index in the domain is split into a high part A of u
 * bits and a low part B of v bits; even rounds add F(round, A) to B, odd rounds F(round, B) to A,
 * modulo their widths. F is AES-256 of a little-endian block (input, round, w, tag, 0, size − 1),
 * its first word taken. A result outside the domain is permuted again (cycle-walking).
 *
 * <p>IDs are unsigned 64-bit values in a {@code long} (domains reach 2^64 − 1). Thread-safe: the
 * cipher is used under this object's lock.
 */
public final class IdPermutation {
  /** IDs encoded in one pass at most: enough to amortise a cipher call, small enough for the caches. */
  private static final int CHUNK = 2048;
  /** Halves of at most this many bits (domains up to 2^32 IDs) get F as a table per round, built once. */
  private static final int TABLE_BITS = 16;
  private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);

  private final long first;
  /** Size of the domain, unsigned (up to 2^64 − 1). */
  private final long size;
  private final int u;
  private final int v;
  private final int rounds;
  private final Cipher cipher;
  /** One AES input per round and chunk position, the constant bytes (round, w, tag, size − 1) written once. */
  private final byte[][] inputs;
  private final byte[] output = new byte[CHUNK * 16];
  private final long[] a = new long[CHUNK];
  private final long[] b = new long[CHUNK];
  private int[][] tables;

  /** The permutation of (startAfter, maxId] under {@code key} (32 bytes) and the sequence's scheme. */
  public IdPermutation(byte[] key, BigInteger startAfter, BigInteger maxId, IdScheme scheme) {
    if (key.length != IdScheme.KEY_BYTES) throw new OpaqueIdException("an opaque sequence key has " + IdScheme.KEY_BYTES + " bytes; got " + key.length);
    if (maxId.compareTo(startAfter) <= 0 || startAfter.signum() < 0 || maxId.compareTo(TWO_64) >= 0) {
      throw new OpaqueIdException("no ID domain between startAfter=" + startAfter + " and maxId=" + maxId);
    }
    this.rounds = scheme.rounds();
    this.first = startAfter.add(BigInteger.ONE).longValue();
    BigInteger bigSize = maxId.subtract(startAfter);
    this.size = bigSize.longValue();
    int w = Math.max(2, bigSize.subtract(BigInteger.ONE).bitLength());
    this.u = w >> 1;
    this.v = w - u;
    this.inputs = new byte[rounds][];
    // A domain of one ID has one permutation.
    if (bigSize.equals(BigInteger.ONE)) {
      this.cipher = null;
      return;
    }
    try {
      this.cipher = Cipher.getInstance("AES/ECB/NoPadding");
      cipher.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"));
    } catch (GeneralSecurityException e) {
      throw new OpaqueIdException("AES-256 is not available in this JVM", e);
    }
    long top = size - 1;
    for (int round = 0; round < rounds; round++) {
      byte[] bytes = new byte[CHUNK * 16];
      for (int k = 0; k < CHUNK; k++) {
        int o = k * 16;
        bytes[o + 4] = (byte) round;
        bytes[o + 5] = (byte) w;
        bytes[o + 6] = (byte) scheme.tag();
        for (int i = 0; i < 8; i++) bytes[o + 8 + i] = (byte) (top >>> (8 * i));
      }
      inputs[round] = bytes;
    }
  }

  /** The permutation of (startAfter, maxId], both within a long. */
  public IdPermutation(byte[] key, long startAfter, long maxId, IdScheme scheme) {
    this(key, BigInteger.valueOf(startAfter), BigInteger.valueOf(maxId), scheme);
  }

  /** The domain's largest ID (unsigned 64-bit). */
  public long maxId() {
    return first - 1 + size;
  }

  /** P(id): the opaque ID of an ordered one (unsigned 64-bit). */
  public synchronized long encode(long id) {
    long[] out = new long[1];
    encodeRun(id, 1, out, 0);
    return out[0];
  }

  /** P⁻¹(id): the ordered ID an opaque one stands for (unsigned 64-bit). */
  public synchronized long decode(long id) {
    long x = index(id);
    if (cipher == null) return id;
    do x = invert(x);
    while (Long.compareUnsigned(x, size) >= 0);
    return first + x;
  }

  /** Writes P of the {@code count} consecutive ordered IDs from {@code from} into {@code out}, from position {@code at}. */
  public synchronized void encodeRun(long from, int count, long[] out, int at) {
    if (count <= 0) return;
    long start = index(from);
    index(from + count - 1);
    if (Long.compareUnsigned(from + count - 1, from) < 0) throw new OpaqueIdException("a run of " + count + " from " + Long.toUnsignedString(from) + " passes 2^64 − 1");
    if (at < 0 || at + count > out.length) throw new OpaqueIdException("no room for " + count + " IDs at " + at + " in an array of " + out.length);
    for (int done = 0; done < count; done += CHUNK) {
      int n = Math.min(CHUNK, count - done);
      long maskV = mask(v);
      for (int k = 0; k < n; k++) {
        long x = start + done + k;
        a[k] = x >>> v;
        b[k] = x & maskV;
      }
      permute(n);
      for (int k = 0; k < n; k++) out[at + done + k] = first + ((a[k] << v) | b[k]);
    }
  }

  /** The position of an ordered ID in the domain; throws for one outside it. */
  private long index(long id) {
    long x = id - first;
    if (Long.compareUnsigned(id, first) < 0 || Long.compareUnsigned(x, size) >= 0) {
      throw new OpaqueIdException("ID " + Long.toUnsignedString(id) + " is outside the sequence's domain (" + Long.toUnsignedString(first - 1) + ", " + Long.toUnsignedString(first - 1 + size) + "]");
    }
    return x;
  }

  /** Runs the network over positions 0..n-1, cycle-walking those that leave the domain. */
  private void permute(int n) {
    if (cipher == null) return;
    network(a, b, n);
    int[] pending = outside(a, b, n, null);
    while (pending.length > 0) {
      long[] pa = new long[pending.length];
      long[] pb = new long[pending.length];
      for (int j = 0; j < pending.length; j++) {
        pa[j] = a[pending[j]];
        pb[j] = b[pending[j]];
      }
      network(pa, pb, pending.length);
      for (int j = 0; j < pending.length; j++) {
        a[pending[j]] = pa[j];
        b[pending[j]] = pb[j];
      }
      pending = outside(pa, pb, pending.length, pending);
    }
  }

  /** Positions whose value lies at or above the domain's size (mapped through {@code positions} when given). */
  private int[] outside(long[] as, long[] bs, int n, int[] positions) {
    int[] found = new int[n];
    int count = 0;
    for (int k = 0; k < n; k++) {
      if (Long.compareUnsigned((as[k] << v) | bs[k], size) >= 0) found[count++] = positions == null ? k : positions[k];
    }
    return Arrays.copyOf(found, count);
  }

  /** The Feistel network, in place, on n (A, B) pairs: one cipher call per round for all of them. */
  private void network(long[] as, long[] bs, int n) {
    long maskU = mask(u);
    long maskV = mask(v);
    int[][] t = tablesIfSmall();
    for (int round = 0; round < rounds; round++) {
      boolean even = (round & 1) == 0;
      long[] source = even ? as : bs;
      long[] target = even ? bs : as;
      long m = even ? maskV : maskU;
      if (t != null) {
        int[] f = t[round];
        for (int k = 0; k < n; k++) target[k] = (target[k] + (f[(int) source[k]] & 0xffffffffL)) & m;
        continue;
      }
      encrypt(round, source, n);
      for (int k = 0; k < n; k++) target[k] = (target[k] + word(output, k)) & m;
    }
  }

  /** Inverse of the network for one index. */
  private long invert(long x) {
    long[] one = new long[1];
    long ha = x >>> v;
    long hb = x & mask(v);
    int[][] t = tablesIfSmall();
    for (int round = rounds - 1; round >= 0; round--) {
      boolean even = (round & 1) == 0;
      long f;
      if (t != null) {
        f = t[round][(int) (even ? ha : hb)] & 0xffffffffL;
      } else {
        one[0] = even ? ha : hb;
        encrypt(round, one, 1);
        f = word(output, 0);
      }
      if (even) hb = (hb - f) & mask(v);
      else ha = (ha - f) & mask(u);
    }
    return (ha << v) | hb;
  }

  /** F(round, x) for every x of each round's input half when halves are small: the same AES calls, so the same values. */
  private int[][] tablesIfSmall() {
    if (tables != null || v > TABLE_BITS) return tables;
    int[][] built = new int[rounds][];
    long[] x = new long[CHUNK];
    for (int round = 0; round < rounds; round++) {
      int tableSize = 1 << ((round & 1) == 0 ? u : v);
      int[] table = new int[tableSize];
      for (int from = 0; from < tableSize; from += CHUNK) {
        int n = Math.min(CHUNK, tableSize - from);
        for (int k = 0; k < n; k++) x[k] = from + k;
        encrypt(round, x, n);
        for (int k = 0; k < n; k++) table[from + k] = (int) word(output, k);
      }
      built[round] = table;
    }
    tables = built;
    return built;
  }

  /** AES-256 of n blocks holding x[0..n-1] as round {@code round}'s input, into {@link #output}. */
  private void encrypt(int round, long[] x, int n) {
    byte[] input = inputs[round];
    for (int k = 0; k < n; k++) {
      int o = k * 16;
      long value = x[k];
      input[o] = (byte) value;
      input[o + 1] = (byte) (value >>> 8);
      input[o + 2] = (byte) (value >>> 16);
      input[o + 3] = (byte) (value >>> 24);
    }
    try {
      cipher.update(input, 0, n * 16, output, 0);
    } catch (ShortBufferException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The first little-endian 32-bit word of block k. */
  private static long word(byte[] bytes, int k) {
    int o = k * 16;
    return (bytes[o] & 0xffL) | (bytes[o + 1] & 0xffL) << 8 | (bytes[o + 2] & 0xffL) << 16 | (bytes[o + 3] & 0xffL) << 24;
  }

  private static long mask(int bits) {
    return bits == 64 ? -1L : (1L << bits) - 1;
  }
}
