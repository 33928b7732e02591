"""AES-256 encryption of single 16-byte blocks (FIPS-197), in pure Python.

Python's standard library has no AES, and the opaque-ID permutation needs exactly AES-256 of one
block per Feistel round. This is the classic four-table ("T-table") form: each round is 16 table
lookups and XORs on four 32-bit words. Only encryption is needed (the permutation inverts its Feistel
network, never the cipher). Checked against FIPS-197 appendix C.3 and OpenSSL's output
(clients/vectors/aes256.json). Not constant-time: fine for ticketd's use, where the key is shared
with every holder of the sequence's client token and the input is public, but do not reuse it to
protect secrets.
"""
from __future__ import annotations

from typing import List, Tuple

ROUNDS = 14
KEY_BYTES = 32


def _xtime(a: int) -> int:
    a <<= 1
    return (a ^ 0x11B) if a & 0x100 else a


def _sbox() -> List[int]:
    # Computed, not typed in: the multiplicative inverse in GF(2^8), then FIPS-197's affine map.
    inverse = [0] * 256
    for a in range(1, 256):
        for b in range(1, 256):
            p, x, y = 0, a, b
            while y:
                if y & 1:
                    p ^= x
                x = _xtime(x)
                y >>= 1
            if p == 1:
                inverse[a] = b
                break
    box = []
    for a in range(256):
        b = inverse[a]
        s = b
        for shift in range(1, 5):
            s ^= ((b << shift) | (b >> (8 - shift))) & 0xFF
        box.append(s ^ 0x63)
    return box


SBOX = _sbox()
_T0 = [((_xtime(s) << 24) | (s << 16) | (s << 8) | (_xtime(s) ^ s)) for s in SBOX]
_T1 = [((t >> 8) | ((t & 0xFF) << 24)) for t in _T0]
_T2 = [((t >> 8) | ((t & 0xFF) << 24)) for t in _T1]
_T3 = [((t >> 8) | ((t & 0xFF) << 24)) for t in _T2]
_S24 = [s << 24 for s in SBOX]
_S16 = [s << 16 for s in SBOX]
_S8 = [s << 8 for s in SBOX]


def expand_key(key: bytes) -> Tuple[int, ...]:
    """The 60 round-key words of an AES-256 key (big-endian words, as FIPS-197 writes them)."""
    if len(key) != KEY_BYTES:
        raise ValueError(f"an AES-256 key has {KEY_BYTES} bytes; got {len(key)}")
    w = [int.from_bytes(key[i : i + 4], "big") for i in range(0, 32, 4)]
    rcon = 1
    for i in range(8, 4 * (ROUNDS + 1)):
        t = w[i - 1]
        if i % 8 == 0:
            t = ((t << 8) & 0xFFFFFFFF) | (t >> 24)
            t = _S24[t >> 24] | _S16[(t >> 16) & 0xFF] | _S8[(t >> 8) & 0xFF] | SBOX[t & 0xFF]
            t ^= rcon << 24
            rcon = _xtime(rcon)
        elif i % 8 == 4:
            t = _S24[t >> 24] | _S16[(t >> 16) & 0xFF] | _S8[(t >> 8) & 0xFF] | SBOX[t & 0xFF]
        w.append(w[i - 8] ^ t)
    return tuple(w)


def encrypt_words(rk: Tuple[int, ...], s0: int, s1: int, s2: int, s3: int, first_only: bool = False) -> Tuple[int, ...]:
    """Encrypts the block whose big-endian words are s0..s3; with ``first_only``, returns only the first word."""
    t0_, t1_, t2_, t3_ = _T0, _T1, _T2, _T3
    s0 ^= rk[0]
    s1 ^= rk[1]
    s2 ^= rk[2]
    s3 ^= rk[3]
    k = 4
    for _ in range(ROUNDS - 1):
        t0 = t0_[s0 >> 24] ^ t1_[(s1 >> 16) & 255] ^ t2_[(s2 >> 8) & 255] ^ t3_[s3 & 255] ^ rk[k]
        t1 = t0_[s1 >> 24] ^ t1_[(s2 >> 16) & 255] ^ t2_[(s3 >> 8) & 255] ^ t3_[s0 & 255] ^ rk[k + 1]
        t2 = t0_[s2 >> 24] ^ t1_[(s3 >> 16) & 255] ^ t2_[(s0 >> 8) & 255] ^ t3_[s1 & 255] ^ rk[k + 2]
        s3 = t0_[s3 >> 24] ^ t1_[(s0 >> 16) & 255] ^ t2_[(s1 >> 8) & 255] ^ t3_[s2 & 255] ^ rk[k + 3]
        s0, s1, s2 = t0, t1, t2
        k += 4
    r0 = (_S24[s0 >> 24] | _S16[(s1 >> 16) & 255] | _S8[(s2 >> 8) & 255] | SBOX[s3 & 255]) ^ rk[56]
    if first_only:
        return (r0,)
    r1 = (_S24[s1 >> 24] | _S16[(s2 >> 16) & 255] | _S8[(s3 >> 8) & 255] | SBOX[s0 & 255]) ^ rk[57]
    r2 = (_S24[s2 >> 24] | _S16[(s3 >> 16) & 255] | _S8[(s0 >> 8) & 255] | SBOX[s1 & 255]) ^ rk[58]
    r3 = (_S24[s3 >> 24] | _S16[(s0 >> 16) & 255] | _S8[(s1 >> 8) & 255] | SBOX[s2 & 255]) ^ rk[59]
    return (r0, r1, r2, r3)


class Aes256:
    """One AES-256 key, its schedule expanded once."""

    __slots__ = ("round_keys",)

    def __init__(self, key: bytes) -> None:
        self.round_keys = expand_key(bytes(key))

    def encrypt_block(self, block: bytes) -> bytes:
        """AES-256 of one 16-byte block (ECB of a single block)."""
        if len(block) != 16:
            raise ValueError(f"an AES block has 16 bytes; got {len(block)}")
        words = [int.from_bytes(block[i : i + 4], "big") for i in range(0, 16, 4)]
        out = encrypt_words(self.round_keys, words[0], words[1], words[2], words[3])
        return b"".join(w.to_bytes(4, "big") for w in out)
