/**
 * Opaque IDs: a keyed permutation P of a sequence's ID domain (startAfter, maxId] onto itself.
 * P is a bijection, so distinct ordered IDs stay distinct; without the key its outputs are meant to
 * look like random draws from the domain (docs/opaque-ids.md says how far that claim goes).
 *
 * The construction (docs/opaque-ids.md states it exactly): the ID's index in the domain is split
 * into a high part A of u bits and a low part B of v bits (u + v = w, the bits of the largest
 * index). Even rounds add F(round, A) to B, odd rounds add F(round, B) to A, modulo their widths:
 * an alternating Feistel network, as in NIST SP 800-38G's FF1, with as many rounds as the sequence's
 * scheme says (10 from feistel-aes256-v2 on, FF1's count; 8 for v1). F is AES-256 of a block holding
 * the round, the domain, the scheme's tag and the input, truncated: a real PRF. A result outside
 * the domain is permuted again (cycle-walking), which keeps P inside the domain whatever its size.
 */
import { createCipheriv, type Cipher } from 'node:crypto';
import { OpaqueIdError } from './errors.js';
import { KEY_BYTES, PERMUTATION_SCHEMES, permutationScheme, type PermutationScheme } from './id-scheme.js';

/** The IDs a sequence may hand out: every integer in (startAfter, maxId]. */
export interface IdDomain {
  readonly startAfter: bigint;
  readonly maxId: bigint;
}

/** IDs encoded in one pass at most: large enough to amortise a cipher call, small enough for L1/L2. */
const CHUNK = 2048;
/** Round 0 encrypts each distinct A once when a chunk spans at most this many A values. */
const ROUND_ZERO_SHORTCUT = 64;
/** Halves of at most this many bits (domains up to 2^32 IDs) get F as a table per round, built once. */
const TABLE_BITS = 16;
const TWO_32 = 4294967296;
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * A keyed permutation of one domain. It holds about 256 KiB of AES input buffers, plus (domains of
 * at most 2^32 IDs) up to 2 MiB of round tables built in a few milliseconds on first use.
 */
export class IdPermutation {
  readonly #first: bigint;
  readonly #size: bigint;
  readonly #u: number;
  readonly #v: number;
  readonly #cipher: Cipher | undefined;
  /** One input buffer per round, its constant words (round, domain) written once. */
  readonly #inputs: Uint32Array[] = [];
  readonly #a = new Uint32Array(CHUNK);
  readonly #b = new Uint32Array(CHUNK);
  readonly #offsetLo: number;
  readonly #offsetHi: number;
  readonly #rounds: number;
  /** F(round, x) for every x of the round's input half, when halves are small; built on first use. */
  #tables: Uint32Array[] | undefined;

  /** `scheme`: the one stored with the sequence's key (id-scheme.ts); a sequence's never changes. */
  constructor(key: Uint8Array, domain: IdDomain, scheme: PermutationScheme) {
    const { rounds, tag } = PERMUTATION_SCHEMES[permutationScheme(scheme)];
    this.#rounds = rounds;
    if (key.length !== KEY_BYTES)
      throw new OpaqueIdError(`an opaque sequence key has ${KEY_BYTES} bytes; got ${key.length}`);
    if (domain.maxId <= domain.startAfter || domain.startAfter < 0n || domain.maxId >= 1n << 64n) {
      throw new OpaqueIdError(`no ID domain between startAfter=${domain.startAfter} and maxId=${domain.maxId}`);
    }
    this.#first = domain.startAfter + 1n;
    this.#size = domain.maxId - domain.startAfter;
    const w = Math.max(2, (this.#size - 1n).toString(2).length);
    this.#u = w >> 1;
    this.#v = w - this.#u;
    this.#offsetLo = Number(this.#first & 0xffffffffn);
    this.#offsetHi = Number(this.#first >> 32n);
    // A domain of one ID has one permutation.
    if (this.#size === 1n) return;
    this.#cipher = createCipheriv('aes-256-ecb', key, null);
    this.#cipher.setAutoPadding(false);
    const sizeLo = Number((this.#size - 1n) & 0xffffffffn);
    const sizeHi = Number((this.#size - 1n) >> 32n);
    for (let round = 0; round < rounds; round++) {
      const bytes = Buffer.alloc(CHUNK * 16);
      for (let k = 0; k < CHUNK; k++) {
        bytes.writeUInt8(round, k * 16 + 4);
        bytes.writeUInt8(w, k * 16 + 5);
        bytes.writeUInt8(tag, k * 16 + 6);
        bytes.writeUInt32LE(sizeLo, k * 16 + 8);
        bytes.writeUInt32LE(sizeHi, k * 16 + 12);
      }
      this.#inputs.push(new Uint32Array(bytes.buffer, bytes.byteOffset, CHUNK * 4));
    }
  }

  /** P(id): the opaque ID of an ordered one. */
  encode(id: bigint): bigint {
    const out = new BigUint64Array(1);
    this.encodeRun(id, 1, out, 0);
    return out[0]!;
  }

  /** P⁻¹(id): the ordered ID an opaque one stands for. */
  decode(id: bigint): bigint {
    let x = this.#index(id);
    if (this.#cipher === undefined) return id;
    do x = this.#invert(x);
    while (x >= this.#size);
    return this.#first + x;
  }

  /** Writes P of the `count` consecutive ordered IDs from `first` into `out`, from position `at`. */
  encodeRun(first: bigint, count: number, out: BigUint64Array, at: number): void {
    if (count <= 0) return;
    const start = this.#index(first);
    this.#index(first + BigInt(count - 1));
    if (at < 0 || at + count > out.length)
      throw new OpaqueIdError(`no room for ${count} IDs at ${at} in an array of ${out.length}`);
    const words = new Uint32Array(out.buffer, out.byteOffset, out.length * 2);
    for (let done = 0; done < count; done += CHUNK) {
      const n = Math.min(CHUNK, count - done);
      this.#load(start + BigInt(done), n);
      this.#permuteLoaded(n);
      this.#store(n, words, at + done);
    }
  }

  /** The position of an ordered ID in the domain; throws for one outside it. */
  #index(id: bigint): bigint {
    const x = id - this.#first;
    if (x < 0n || x >= this.#size) {
      throw new OpaqueIdError(
        `ID ${id} is outside the sequence's domain (${this.#first - 1n}, ${this.#first - 1n + this.#size}]`,
      );
    }
    return x;
  }

  /** Splits n consecutive indices from `start` into their high (A) and low (B) parts. */
  #load(start: bigint, n: number): void {
    const span = 2 ** this.#v;
    let a = Number(start / BigInt(span));
    let b = Number(start % BigInt(span));
    for (let k = 0; k < n; k++) {
      this.#a[k] = a;
      this.#b[k] = b;
      if (++b === span) {
        b = 0;
        a++;
      }
    }
  }

  /** Runs the Feistel network over positions 0..n-1, cycle-walking those that leave the domain. */
  #permuteLoaded(n: number): void {
    if (this.#cipher === undefined) return;
    this.#network(this.#a, this.#b, n, true);
    // Cycle-walking: at most a few passes, as the domain fills over half of the 2^w values.
    let pending = this.#outside(n);
    while (pending.length > 0) {
      const a = new Uint32Array(pending.length);
      const b = new Uint32Array(pending.length);
      pending.forEach((k, j) => {
        a[j] = this.#a[k]!;
        b[j] = this.#b[k]!;
      });
      this.#network(a, b, pending.length, false);
      const still: number[] = [];
      pending.forEach((k, j) => {
        this.#a[k] = a[j]!;
        this.#b[k] = b[j]!;
        if (this.#valueOf(a[j]!, b[j]!) >= this.#size) still.push(k);
      });
      pending = still;
    }
  }

  #outside(n: number): number[] {
    const outside: number[] = [];
    // 2^w ≤ 2·size, so a value with A below the top of the domain's A is inside: skip the bigint.
    const topA = Number((this.#size - 1n) >> BigInt(this.#v));
    for (let k = 0; k < n; k++) {
      if (this.#a[k]! >= topA && this.#valueOf(this.#a[k]!, this.#b[k]!) >= this.#size) outside.push(k);
    }
    return outside;
  }

  #valueOf(a: number, b: number): bigint {
    return (BigInt(a) << BigInt(this.#v)) | BigInt(b);
  }

  /**
   * The Feistel network, in place, on n (A, B) pairs: one AES call per round for all of them. With
   * `consecutive` (indices in order, so A takes few values), round 0 encrypts each A value once.
   */
  #network(a: Uint32Array, b: Uint32Array, n: number, consecutive: boolean): void {
    const maskU = 2 ** this.#u - 1;
    const maskV = 2 ** this.#v - 1;
    const tables = this.#tablesIfSmall();
    if (tables !== undefined) {
      for (let round = 0; round < this.#rounds; round++) {
        const even = (round & 1) === 0;
        const source = even ? a : b;
        const target = even ? b : a;
        const mask = even ? maskV : maskU;
        const f = tables[round]!;
        for (let k = 0; k < n; k++) target[k] = ((target[k]! + f[source[k]!]!) & mask) >>> 0;
      }
      return;
    }
    let round = 0;
    const lowestA = a[0]!;
    const spanA = a[n - 1]! - lowestA + 1;
    if (consecutive && spanA <= ROUND_ZERO_SHORTCUT) {
      const distinct = new Uint32Array(spanA);
      for (let j = 0; j < spanA; j++) distinct[j] = lowestA + j;
      this.#write(0, distinct, spanA);
      const f = this.#encrypt(0, spanA);
      const next = this.#inputs[1]!;
      for (let k = 0; k < n; k++) {
        const t = ((b[k]! + f[(a[k]! - lowestA) << 2]!) & maskV) >>> 0;
        b[k] = t;
        next[k << 2] = t;
      }
      round = 1;
    } else {
      this.#write(0, a, n);
    }
    for (; round < this.#rounds; round++) {
      const even = (round & 1) === 0;
      const target = even ? b : a;
      // Masks below 2^32 keep the sum exact: (x + f) & mask is the sum modulo 2^width.
      const mask = even ? maskV : maskU;
      const f = this.#encrypt(round, n);
      if (round === this.#rounds - 1) {
        for (let k = 0; k < n; k++) target[k] = ((target[k]! + f[k << 2]!) & mask) >>> 0;
      } else {
        // The word just changed is the next round's input: write it there in the same pass.
        const next = this.#inputs[round + 1]!;
        for (let k = 0; k < n; k++) {
          const t = ((target[k]! + f[k << 2]!) & mask) >>> 0;
          target[k] = t;
          next[k << 2] = t;
        }
      }
    }
  }

  /** Inverse of the network for one index. */
  #invert(x: bigint): bigint {
    const a = new Uint32Array([Number(x >> BigInt(this.#v))]);
    const b = new Uint32Array([Number(x & ((1n << BigInt(this.#v)) - 1n))]);
    const maskU = 2 ** this.#u - 1;
    const maskV = 2 ** this.#v - 1;
    const tables = this.#tablesIfSmall();
    for (let round = this.#rounds - 1; round >= 0; round--) {
      const even = (round & 1) === 0;
      let f: Uint32Array;
      if (tables !== undefined) {
        f = new Uint32Array([tables[round]![(even ? a : b)[0]!]!]);
      } else {
        this.#write(round, even ? a : b, 1);
        f = this.#encrypt(round, 1);
      }
      if (even) b[0] = ((b[0]! - f[0]!) & maskV) >>> 0;
      else a[0] = ((a[0]! - f[0]!) & maskU) >>> 0;
    }
    return this.#valueOf(a[0]!, b[0]!);
  }

  /**
   * The round functions as tables when both halves have at most TABLE_BITS bits: F(round, x) for
   * every x, by the same AES calls a batch would make, so lookups give exactly the same values.
   */
  #tablesIfSmall(): Uint32Array[] | undefined {
    if (this.#tables !== undefined || this.#v > TABLE_BITS) return this.#tables;
    const tables: Uint32Array[] = [];
    for (let round = 0; round < this.#rounds; round++) {
      const size = 2 ** ((round & 1) === 0 ? this.#u : this.#v);
      const table = new Uint32Array(size);
      const x = new Uint32Array(CHUNK);
      for (let from = 0; from < size; from += CHUNK) {
        const n = Math.min(CHUNK, size - from);
        for (let k = 0; k < n; k++) x[k] = from + k;
        this.#write(round, x, n);
        const f = this.#encrypt(round, n);
        for (let k = 0; k < n; k++) table[from + k] = f[k << 2]!;
      }
      tables.push(table);
    }
    this.#tables = tables;
    return tables;
  }

  /** Puts x[0..n-1] into the input words of `round`'s blocks. */
  #write(round: number, x: Uint32Array, n: number): void {
    const input = this.#inputs[round]!;
    for (let k = 0; k < n; k++) input[k << 2] = x[k]!;
  }

  /** F(round, ·) of the n inputs written: AES-256 of one block each, in one call; word 4k is F of input k. */
  #encrypt(round: number, n: number): Uint32Array {
    const input = this.#inputs[round]!;
    // Blocks are little-endian (docs/opaque-ids.md); a big-endian host swaps the words it wrote.
    if (!LITTLE_ENDIAN) for (let k = 0; k < n; k++) input[k << 2] = swap32(input[k << 2]!);
    const encrypted = this.#cipher!.update(new Uint8Array(input.buffer, input.byteOffset, n * 16));
    const words = new Uint32Array(encrypted.buffer, encrypted.byteOffset, n * 4);
    if (!LITTLE_ENDIAN) for (let k = 0; k < n; k++) words[k << 2] = swap32(words[k << 2]!);
    return words;
  }

  /** Writes first + (A·2^v + B) for positions 0..n-1 as 64-bit words into `words` from ID position `at`. */
  #store(n: number, words: Uint32Array, at: number): void {
    const v = this.#v;
    const as = this.#a;
    const bs = this.#b;
    const offsetLo = this.#offsetLo;
    const offsetHi = this.#offsetHi;
    const lo = LITTLE_ENDIAN ? 0 : 1;
    const hi = 1 - lo;
    for (let k = 0; k < n; k++) {
      const a = as[k]!;
      const b = bs[k]!;
      // A·2^v + B as two 32-bit words (v ≤ 32, so A's low bits join B's in the low word).
      const yLo = v === 32 ? b : ((a << v) | b) >>> 0;
      const yHi = v === 32 ? a : a >>> (32 - v);
      let sumLo = yLo + offsetLo;
      let carry = 0;
      if (sumLo >= TWO_32) {
        sumLo -= TWO_32;
        carry = 1;
      }
      const slot = (at + k) * 2;
      words[slot + lo] = sumLo;
      words[slot + hi] = yHi + offsetHi + carry;
    }
  }
}

function swap32(x: number): number {
  return (((x & 0xff) << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24)) >>> 0;
}
