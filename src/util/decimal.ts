/**
 * 64-bit IDs as decimal ASCII, written straight into bytes from their two 32-bit halves: no BigInt
 * (whose toString costs as much as the rest of a request, on every opaque ID of a 64-bit domain)
 * and no string per ID. Used by the HTTP layer (format-ids.ts) and by the encoder thread, which
 * writes opaque IDs as JSON strings ahead of the requests that hand them out.
 */

const TWO_32 = 4294967296;
/** "00", "01", … "99" as ASCII: two digits per lookup. */
const PAIRS = new Uint8Array(200);
for (let i = 0; i < 100; i++) {
  PAIRS[2 * i] = 48 + Math.floor(i / 10);
  PAIRS[2 * i + 1] = 48 + (i % 10);
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
 * quotient corrected by its remainder); the limbs are written two digits at a time.
 */
export function writeUint64(out: Uint8Array, pos: number, hi: number, lo: number): number {
  if (hi < 0x200000) {
    // Below 2^53: the value itself is an exact double.
    const n = hi * TWO_32 + lo;
    if (n < 1e8) return writeSmall(out, pos, n);
    const top = quotient(n, 1e8);
    pos = writeSmall(out, pos, top);
    write8(out, pos, n - top * 1e8);
    return pos + 8;
  }
  // 2^32 = 4294·10^6 + 967296, so the value is (hi·4294 + c)·10^6 + r, where hi·967296 + lo = c·10^6 + r.
  const low = hi * 967296 + lo;
  const carry = quotient(low, 1e6);
  const high = hi * 4294 + carry;
  const top = quotient(high, 1e8);
  pos = writeSmall(out, pos, top);
  write8(out, pos, high - top * 1e8);
  const rest = low - carry * 1e6;
  const r1 = (rest / 10000) | 0;
  const r23 = rest - r1 * 10000;
  const r2 = (r23 / 100) | 0;
  write2(out, pos + 8, r1);
  write2(out, pos + 10, r2);
  write2(out, pos + 12, r23 - r2 * 100);
  return pos + 14;
}

/** ⌊n / d⌋ for integers n < 2^53: the division's rounding corrected by the remainder. */
function quotient(n: number, d: number): number {
  const q = Math.floor(n / d);
  const r = n - q * d;
  return r < 0 ? q - 1 : r >= d ? q + 1 : q;
}

/** n (0 ≤ n < 10^8) without leading zeros. */
function writeSmall(out: Uint8Array, pos: number, n: number): number {
  const digits = n < 10 ? 1 : n < 100 ? 2 : n < 1e3 ? 3 : n < 1e4 ? 4 : n < 1e5 ? 5 : n < 1e6 ? 6 : n < 1e7 ? 7 : 8;
  let at = pos + digits;
  while (n >= 10) {
    const q = (n / 10) | 0;
    out[--at] = 48 + n - q * 10;
    n = q;
  }
  out[at - 1] = 48 + n;
  return pos + digits;
}

/** n (0 ≤ n < 10^8) in exactly 8 digits at pos. */
function write8(out: Uint8Array, pos: number, n: number): void {
  const a = (n / 10000) | 0;
  const b = n - a * 10000;
  const a1 = (a / 100) | 0;
  const b1 = (b / 100) | 0;
  write2(out, pos, a1);
  write2(out, pos + 2, a - a1 * 100);
  write2(out, pos + 4, b1);
  write2(out, pos + 6, b - b1 * 100);
}

/** n (0 ≤ n < 100) in exactly 2 digits at pos. */
function write2(out: Uint8Array, pos: number, n: number): void {
  out[pos] = PAIRS[n << 1]!;
  out[pos + 1] = PAIRS[(n << 1) + 1]!;
}
