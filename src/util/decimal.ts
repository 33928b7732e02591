/**
 * 64-bit IDs as decimal ASCII, written straight into bytes from their two 32-bit halves: no BigInt
 * (whose toString costs as much as the rest of a request, on every opaque ID of a 64-bit domain)
 * and no string per ID. Used by the HTTP layer (format-ids.ts) and by the encoder thread, which
 * writes opaque IDs as JSON strings ahead of the requests that hand them out.
 */

const TWO_32 = 4294967296;
/** "0000", "0001", … "9999" as ASCII: four digits per lookup, for a division by 10^4 per four. */
const QUADS = new Uint8Array(40_000);
for (let i = 0; i < 10_000; i++) {
  QUADS[4 * i] = 48 + Math.floor(i / 1000);
  QUADS[4 * i + 1] = 48 + (Math.floor(i / 100) % 10);
  QUADS[4 * i + 2] = 48 + (Math.floor(i / 10) % 10);
  QUADS[4 * i + 3] = 48 + (i % 10);
}
const QUOTE = 34;
const COMMA = 44;
/** Longest decimal uint64 (18446744073709551615). */
export const MAX_DIGITS = 20;
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * IDs written as JSON strings, each followed by a comma: `"7","12",`. `starts[k]` is where ID k's
 * opening quote is, and `starts[count]` the length, so IDs i..j-1 are `bytes[starts[i], starts[j])`.
 */
export interface QuotedIds {
  readonly bytes: Uint8Array;
  readonly starts: Uint32Array;
}

/** The IDs as QuotedIds, in order. */
export function quoteIds(ids: BigUint64Array): QuotedIds {
  const bytes = new Uint8Array(ids.length * (MAX_DIGITS + 3));
  const starts = new Uint32Array(ids.length + 1);
  // The halves read in a loop of its own, not through forEachHalves: this runs for every opaque ID.
  const words = new Uint32Array(ids.buffer, ids.byteOffset, ids.length * 2);
  const hiAt = LITTLE_ENDIAN ? 1 : 0;
  let pos = 0;
  for (let k = 0; k < ids.length; k++) {
    starts[k] = pos;
    bytes[pos++] = QUOTE;
    pos = writeUint64(bytes, pos, words[2 * k + hiAt]!, words[2 * k + 1 - hiAt]!);
    bytes[pos++] = QUOTE;
    bytes[pos++] = COMMA;
  }
  starts[ids.length] = pos;
  // A copy of the used part, so the thread that gets it holds no unused tail.
  return { bytes: bytes.slice(0, pos), starts };
}

/** Calls `put(hi, lo)` for every ID of the array, in order, with its two 32-bit halves. */
export function forEachHalves(ids: BigUint64Array, put: (hi: number, lo: number) => void): void {
  const words = new Uint32Array(ids.buffer, ids.byteOffset, ids.length * 2);
  const [lo, hi] = LITTLE_ENDIAN ? [0, 1] : [1, 0];
  for (let k = 0; k < ids.length; k++) put(words[2 * k + hi]!, words[2 * k + lo]!);
}

/**
 * Writes hi·2^32 + lo in decimal at `pos`; returns the position after it. The value is split
 * into limbs below 10^8 with exact double arithmetic (every intermediate stays below 2^53, each
 * quotient corrected by its remainder); the limbs are written four digits per table lookup.
 */
export function writeUint64(out: Uint8Array, pos: number, hi: number, lo: number): number {
  if (hi < 0x200000) {
    // Below 2^53: the value itself is an exact double.
    const n = hi * TWO_32 + lo;
    if (n < 1e8) return writeSmall(out, pos, n);
    // n < 2^53 < 10^16, so the top limb is below 10^8.
    const top = quotient(n, 1e8, 1e-8);
    pos = writeSmall(out, pos, top);
    write8(out, pos, n - top * 1e8);
    return pos + 8;
  }
  // 2^32 = 4294·10^6 + 967296, so the value is (hi·4294 + c)·10^6 + r, where hi·967296 + lo = c·10^6 + r.
  const low = hi * 967296 + lo;
  const carry = quotient(low, 1e6, 1e-6);
  const high = hi * 4294 + carry;
  const top = quotient(high, 1e8, 1e-8);
  pos = writeSmall(out, pos, top);
  write8(out, pos, high - top * 1e8);
  // The last six digits: two from the upper two of a quad, then four.
  const rest = low - carry * 1e6;
  const r1 = (rest / 10_000) | 0;
  out[pos + 8] = QUADS[(r1 << 2) + 2]!;
  out[pos + 9] = QUADS[(r1 << 2) + 3]!;
  write4(out, pos + 10, rest - r1 * 10_000);
  return pos + 14;
}

/**
 * ⌊n / d⌋ for integers 0 ≤ n < 2^53, d ≥ 10^6 and inverse ≈ 1/d: a multiplication costs a fraction
 * of a division. n·inverse is within about 2^-51 of n/d relative, under 10^-5 absolute for these
 * quotients (below 2^34), so its floor is off by at most one, and the remainder corrects that.
 */
function quotient(n: number, d: number, inverse: number): number {
  const q = Math.floor(n * inverse);
  const r = n - q * d;
  return r < 0 ? q - 1 : r >= d ? q + 1 : q;
}

/** n (0 ≤ n < 10^8) without leading zeros. */
function writeSmall(out: Uint8Array, pos: number, n: number): number {
  if (n < 10_000) return writeLeading(out, pos, n);
  const q = (n / 10_000) | 0;
  pos = writeLeading(out, pos, q);
  write4(out, pos, n - q * 10_000);
  return pos + 4;
}

/** n (0 ≤ n < 10^4) without leading zeros: the tail of its quad. */
function writeLeading(out: Uint8Array, pos: number, n: number): number {
  const at = n << 2;
  if (n >= 1000) {
    out[pos] = QUADS[at]!;
    out[pos + 1] = QUADS[at + 1]!;
    out[pos + 2] = QUADS[at + 2]!;
    out[pos + 3] = QUADS[at + 3]!;
    return pos + 4;
  }
  if (n >= 100) {
    out[pos] = QUADS[at + 1]!;
    out[pos + 1] = QUADS[at + 2]!;
    out[pos + 2] = QUADS[at + 3]!;
    return pos + 3;
  }
  if (n >= 10) {
    out[pos] = QUADS[at + 2]!;
    out[pos + 1] = QUADS[at + 3]!;
    return pos + 2;
  }
  out[pos] = QUADS[at + 3]!;
  return pos + 1;
}

/** n (0 ≤ n < 10^8) in exactly 8 digits at pos. */
function write8(out: Uint8Array, pos: number, n: number): void {
  const q = (n / 10_000) | 0;
  write4(out, pos, q);
  write4(out, pos + 4, n - q * 10_000);
}

/** n (0 ≤ n < 10^4) in exactly 4 digits at pos. */
function write4(out: Uint8Array, pos: number, n: number): void {
  const at = n << 2;
  out[pos] = QUADS[at]!;
  out[pos + 1] = QUADS[at + 1]!;
  out[pos + 2] = QUADS[at + 2]!;
  out[pos + 3] = QUADS[at + 3]!;
}
