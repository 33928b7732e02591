package dev.ticketd.client;

/**
 * A sequence's mapping between ordered and served IDs: the identity for an ordered sequence, the
 * sequence's permutation (under the scheme stored with its key) for an opaque one. IDs are unsigned
 * 64-bit values in a long.
 */
public interface IdCodec {
  /** {@code ordered} or {@code opaque}. */
  String ids();

  /** The ID ticketd serves for an ordered one. */
  long encode(long ordered);

  /** The ordered ID behind one ticketd served. */
  long decode(long id);

  /** The codec of an ordered sequence. */
  IdCodec ORDERED = new IdCodec() {
    @Override
    public String ids() {
      return "ordered";
    }

    @Override
    public long encode(long ordered) {
      return ordered;
    }

    @Override
    public long decode(long id) {
      return id;
    }
  };

  /** An opaque sequence's codec, with the permutation behind it. */
  final class Opaque implements IdCodec {
    private final IdPermutation permutation;

    Opaque(IdPermutation permutation) {
      this.permutation = permutation;
    }

    @Override
    public String ids() {
      return "opaque";
    }

    @Override
    public long encode(long ordered) {
      return permutation.encode(ordered);
    }

    @Override
    public long decode(long id) {
      return permutation.decode(id);
    }

    public IdPermutation permutation() {
      return permutation;
    }
  }
}
