"""Opaque IDs: a keyed permutation P of a sequence's ID domain (startAfter, maxId] onto itself.

The same construction as ticketd's (docs/opaque-ids.md), bit for bit: the ID's index in the domain
is split into a high part A of u bits and a low part B of v bits (u + v = w, the bits of the largest
index). Even rounds add F(round, A) to B, odd rounds add F(round, B) to A, modulo their widths: an
alternating Feistel network with the scheme's number of rounds. F is the first little-endian 32-bit
word of AES-256 of a block holding the input (little-endian), the round, w, the scheme's tag and
the domain's largest index. A result outside the domain is permuted again (cycle-walking).
"""
from __future__ import annotations

from typing import Dict, List

from .aes256 import Aes256, encrypt_words
from .errors import OpaqueIdError
from .id_scheme import KEY_BYTES, permutation_scheme

#: Halves of at most this many bits keep every F value computed, so small domains cost lookups.
_MEMO_BITS = 12
_UINT64_LIMIT = 1 << 64


def _bswap32(x: int) -> int:
    return ((x & 0xFF) << 24) | ((x & 0xFF00) << 8) | ((x >> 8) & 0xFF00) | (x >> 24)


class IdPermutation:
    """A keyed permutation of one domain; safe to share between threads (its caches only grow)."""

    def __init__(self, key: bytes, start_after: int, max_id: int, scheme: str) -> None:
        rounds, tag = permutation_scheme(scheme)
        if len(key) != KEY_BYTES:
            raise OpaqueIdError(f"an opaque sequence key has {KEY_BYTES} bytes; got {len(key)}")
        if max_id <= start_after or start_after < 0 or max_id >= _UINT64_LIMIT:
            raise OpaqueIdError(f"no ID domain between startAfter={start_after} and maxId={max_id}")
        self.scheme = scheme
        self.start_after = start_after
        self.max_id = max_id
        self._first = start_after + 1
        self._size = max_id - start_after
        w = max(2, (self._size - 1).bit_length())
        self._u = w >> 1
        self._v = w - self._u
        self._rounds = rounds
        self._rk = Aes256(bytes(key)).round_keys
        top = self._size - 1
        # The constant words of each round's block, already as AES reads them (big-endian words).
        self._consts = [
            (
                (r << 24) | (w << 16) | (tag << 8),
                _bswap32(top & 0xFFFFFFFF),
                _bswap32(top >> 32),
            )
            for r in range(rounds)
        ]
        # F(round, x) remembered: every value for small halves; for larger ones the last input per
        # round, which round 0 of consecutive IDs hits almost always (they share A).
        self._memo: List[Dict[int, int]] = [dict() for _ in range(rounds)]
        self._memo_all = max(self._u, self._v) <= _MEMO_BITS
        self._last_in = [-1] * rounds
        self._last_out = [0] * rounds

    def _f(self, r: int, x: int) -> int:
        c1, c2, c3 = self._consts[r]
        return _bswap32(encrypt_words(self._rk, _bswap32(x), c1, c2, c3, True)[0])

    def _round(self, r: int, x: int) -> int:
        if self._memo_all:
            memo = self._memo[r]
            f = memo.get(x)
            if f is None:
                f = memo[x] = self._f(r, x)
            return f
        if self._last_in[r] == x:
            return self._last_out[r]
        f = self._f(r, x)
        self._last_in[r] = x
        self._last_out[r] = f
        return f

    def _index(self, id_: int) -> int:
        x = id_ - self._first
        if x < 0 or x >= self._size:
            raise OpaqueIdError(
                f"ID {id_} is outside the sequence's domain ({self._first - 1}, {self._first - 1 + self._size}]"
            )
        return x

    def encode(self, id_: int) -> int:
        """P(id): the opaque ID of an ordered one."""
        x = self._index(id_)
        if self._size == 1:
            return id_
        v = self._v
        mask_v = (1 << v) - 1
        mask_u = (1 << self._u) - 1
        rounds = self._rounds
        f = self._round
        while True:
            a = x >> v
            b = x & mask_v
            for r in range(0, rounds, 2):
                b = (b + f(r, a)) & mask_v
                a = (a + f(r + 1, b)) & mask_u
            x = (a << v) | b
            if x < self._size:
                return self._first + x

    def decode(self, id_: int) -> int:
        """P⁻¹(id): the ordered ID an opaque one stands for."""
        x = self._index(id_)
        if self._size == 1:
            return id_
        v = self._v
        mask_v = (1 << v) - 1
        mask_u = (1 << self._u) - 1
        f = self._round
        while True:
            a = x >> v
            b = x & mask_v
            for r in range(self._rounds - 1, 0, -2):
                a = (a - f(r, b)) & mask_u
                b = (b - f(r - 1, a)) & mask_v
            x = (a << v) | b
            if x < self._size:
                return self._first + x

    def encode_run(self, first: int, count: int) -> List[int]:
        """P of ``count`` consecutive ordered IDs from ``first``."""
        if count <= 0:
            return []
        self._index(first + count - 1)
        return [self.encode(first + k) for k in range(count)]
