"""The ticket client: leases whole blocks from ticketd (``POST /v1/sequences/{name}/blocks``) and
hands their IDs out in-process. A block is leased to one client and used once, so IDs never repeat
within or across processes; a crash loses the rest of the block, which only leaves a gap.

A strict sequence has no blocks (409 TICKETD_STRICT_NO_BLOCKS): its IDs then come from ticketd each
time (strict_ids.py), and ``next_nowait()`` raises StrictSequenceError.

``close()`` gives the unused IDs of blocks leased with a ``lease`` back (block_returns.py), once.
"""
from __future__ import annotations

import itertools
import ssl
import sys
import threading
import time
from collections import deque
from concurrent.futures import Future
from typing import Any, Callable, Deque, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple
from urllib.parse import quote

from ._http import Attempt, Transport, ask_in_turn
from .block_returns import DEFAULT_GIVE_BACK_TIMEOUT_S, Tail, give_back, tail_of
from .errors import LeaseFailedError, NoBufferedIdsError
from .id_codec import IdCodec, fetch_id_codec
from .id_permutation import IdPermutation
from .strict_ids import STRICT_NO_BLOCKS, STRICT_TIMEOUT_S, StrictIds

#: Most blocks a client leases ahead of use.
MAX_BLOCKS_AHEAD = 32
#: Opaque IDs encoded at a time (under the client's lock): pure-Python AES makes a chunk costly.
ENCODE_CHUNK = 64


class _Block(NamedTuple):
    first: int
    last: int
    #: From this ID on, the next block is leased in the background.
    prefetch_at: int
    #: What gives the block's unused IDs back on close(); None when ticketd leased it without one.
    lease: Optional[str] = None


class TicketClient:
    """A client of one sequence, safe to share between threads. Nothing is leased until the first ID is asked for.

    ``urls``: ticketd base URLs; a lease fails over from one to the next. ``token``: sent as a bearer
    token (sequences with client tokens). ``prefetch_below_ratio``: lease the next block when fewer
    than this fraction of the current one is left. ``timeout``: seconds per request (default 2; 5 for
    a strict sequence). ``ordered``: for an opaque sequence, hand out its ordered IDs (and show
    ``codec().encode(id)``). ``ssl_context``: for https:// URLs with a private CA or client certificates.
    ``give_back_timeout``: seconds ``close()`` may spend giving unused leased IDs back (0: none given back).
    ``on_event``: called with dicts (``type``: returned, return-failed) from the thread that closes the client.
    """

    def __init__(
        self,
        urls: Sequence[str],
        sequence: str,
        *,
        token: Optional[str] = None,
        prefetch_below_ratio: float = 0.5,
        timeout: Optional[float] = None,
        ordered: bool = False,
        ssl_context: Optional[ssl.SSLContext] = None,
        give_back_timeout: float = DEFAULT_GIVE_BACK_TIMEOUT_S,
        on_event: Optional[Callable[[Dict[str, Any]], None]] = None,
    ) -> None:
        if isinstance(urls, str):
            urls = [urls]
        if len(urls) == 0:
            raise LeaseFailedError("TicketClient needs at least one ticketd URL")
        self._urls = [u.rstrip("/") for u in urls]
        self._sequence = sequence
        self._ordered = ordered
        self._prefetch_ratio = prefetch_below_ratio
        self._timeout_given = timeout
        self._transport = Transport(token, timeout, ssl_context)
        self._give_back_timeout = give_back_timeout
        self._emit: Callable[[Dict[str, Any]], None] = on_event if on_event is not None else (lambda event: None)
        # Every field below is guarded by this lock.
        self._lock = threading.Lock()
        # Notified whenever a lease ends, for close().
        self._leases_ended = threading.Condition(self._lock)
        # Blocks whose lease ended after close(), given back with the rest; None once close() took them.
        self._late: Optional[List[Tail]] = []
        self._blocks: Deque[_Block] = deque()
        self._preferred = 0
        self._closed = False
        self._permutation: Optional[IdPermutation] = None
        self._codec: Optional[IdCodec] = None
        self._codec_lock = threading.Lock()
        # Leases in flight, and how many blocks to keep ahead: doubled whenever next() had to wait,
        # so a fast consumer ends up with enough blocks buffered to cover a lease's round trip.
        self._in_flight = 0
        self._ahead = 1
        self._waiter: Optional["Future[None]"] = None
        # The ordered block being handed out: its counter, its prefetch point and its last ID, replaced
        # together (one tuple) when the client moves to the next block or past the prefetch point.
        self._hot: Tuple[Iterator[int], int, int] = (_count(0), 0, -1)
        self._hot_lease: Optional[str] = None
        # An opaque block being handed out (under the lock): its cursor, prefetch point and last ID,
        # and the opaque IDs encoded from it, handed out before the cursor moves on.
        self._cur = 0
        self._fast_end = 0
        self._last = -1
        self._encoded: List[int] = []
        self._pos = 0
        self._cur_lease: Optional[str] = None
        self._strict: Optional[StrictIds] = None
        #: Blocks leased so far.
        self.leases = 0

    def __enter__(self) -> "TicketClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def next_nowait(self) -> int:
        """The next ID without waiting; raises NoBufferedIdsError when no block is buffered,
        StrictSequenceError for a strict sequence (Node's ``nextSync()``)."""
        # The hot path takes no lock: the block's counter, its prefetch point and its last ID are
        # read as one tuple, and drawing from an itertools.count is one atomic step, so no two
        # threads ever get the same ID, and an ID below the block's own prefetch point is in it.
        counter, end, last = self._hot
        id_ = next(counter)
        # Read after the draw: close() sets _closed before it draws where its give-back starts, so an
        # ID drawn after that is never handed out.
        if id_ < end and not self._closed:
            return id_
        with self._lock:
            got = self._take_locked(id_, counter, last)
            if got is not None:
                return got
            if self._strict is not None:
                self._strict.refuse_nowait()
        raise NoBufferedIdsError(f"no block of {self._sequence} is buffered yet")

    def next(self) -> int:
        """The next ID; waits for a lease only when no block is buffered (a strict sequence: asks ticketd each time)."""
        counter, end, last = self._hot
        id_ = next(counter)
        if id_ < end and not self._closed:
            return id_
        with self._lock:
            got = self._take_locked(id_, counter, last)
        return got if got is not None else self._next_slow()

    def next_batch(self, count: int) -> List[int]:
        """``count`` IDs, in the order handed out."""
        strict = self._strict
        if strict is not None:
            return strict.batch(count)
        return [self.next() for _ in range(count)]

    def codec(self) -> IdCodec:
        """The sequence's codec; for an opaque sequence it fetches the key (needs the sequence's own client token)."""
        with self._codec_lock:
            if self._codec is None:
                self._codec = fetch_id_codec(self._urls, self._sequence, self._transport)
            return self._codec

    @property
    def strict(self) -> bool:
        """True once ticketd answered that the sequence is strict."""
        return self._strict is not None

    def close(self) -> None:
        """Stops prefetching and gives the unused IDs of the blocks in hand back (those leased with a
        ``lease``), once, within ``give_back_timeout``; the rest are given up (a gap). Waits for the leases
        in flight (within the same time when giving back). Calls after it raise LeaseFailedError."""
        deadline = time.monotonic() + self._give_back_timeout
        with self._lock:
            if self._closed:
                return
            self._closed = True
            tails = self._unused_tails()
            strict = self._strict
            self._blocks.clear()
            self._hot = (_count(0), 0, -1)
            self._cur = 0
            self._fast_end = 0
            self._last = -1
            self._encoded = []
            self._pos = 0
        if strict is not None:
            strict.close()
        giving_back = self._give_back_timeout > 0
        with self._lock:
            # A lease still running at the deadline is given up: its block, when it comes, is dropped.
            wait_s = deadline - time.monotonic() if giving_back else None
            self._leases_ended.wait_for(lambda: self._in_flight == 0, wait_s)
            tails.extend(self._late or [])
            self._late = None
            start = self._preferred
        if giving_back:
            give_back(self._transport, self._urls, start, self._sequence, tails, deadline, self._emit)
        self._transport.close()

    def _unused_tails(self) -> List[Tail]:
        """The unused IDs of the block in hand and of every block buffered (lock held, _closed set)."""
        found: List[Optional[Tail]] = []
        if self._permutation is not None:
            # Encoded but not handed out: the IDs before the cursor, in the block's own order.
            found.append(tail_of(self._cur_lease, self._cur - (len(self._encoded) - self._pos), self._last))
        else:
            # Drawn after _closed was set: a thread on the hot path that draws after this hands nothing out.
            counter, _, last = self._hot
            found.append(tail_of(self._hot_lease, next(counter), last))
        found.extend(tail_of(b.lease, b.first, b.last) for b in self._blocks)
        return [t for t in found if t is not None]

    def _next_slow(self) -> int:
        doubled = False
        while True:
            with self._lock:
                strict = self._strict
                if strict is None:
                    got = self._take_locked(None, None, -1)
                    if got is not None:
                        return got
                    if self._closed:
                        raise LeaseFailedError("client is closed")
                    if self._in_flight > 0:
                        if not doubled:
                            self._ahead = min(MAX_BLOCKS_AHEAD, self._ahead * 2)
                            doubled = True
                        waiter = self._waiter
                    else:
                        waiter = self._refill()
            if strict is not None:
                return strict.next()
            try:
                waiter.result()  # type: ignore[union-attr]
            except LeaseFailedError as error:
                if self._became_strict(error):
                    continue
                with self._lock:
                    if self._blocks:
                        continue
                raise

    def _take_locked(self, drawn: Optional[int], counter: Optional[Iterator[int]], last: int) -> Optional[int]:
        """An ID from the buffered blocks, or None when none is buffered (lock held). ``drawn`` is an ID
        the hot path drew at or past its block's prefetch point (``counter`` and ``last`` are that
        block's): still the caller's if it lies in that block."""
        if self._closed:
            return None
        if self._permutation is not None:
            return self._take_encoded()
        if drawn is not None and drawn <= last:
            if counter is self._hot[0]:
                self._past_prefetch_point(counter, last)
            return drawn
        while True:
            counter, end, last = self._hot
            id_ = next(counter)
            if id_ <= last:
                if id_ >= end:
                    self._past_prefetch_point(counter, last)
                return id_
            # This block is used up (IDs drawn past its end are never handed out).
            if not self._blocks:
                return None
            block = self._blocks.popleft()
            self._hot = (_count(block.first), block.prefetch_at, block.last)
            self._hot_lease = block.lease

    def _past_prefetch_point(self, counter: Iterator[int], last: int) -> None:
        # Lease ahead while this block still has a share left, so next() rarely waits; the rest of
        # the block then goes out on the hot path.
        self._top_up()
        self._hot = (counter, last + 1, last)

    def _became_strict(self, error: LeaseFailedError) -> bool:
        """Whether a lease's failure says the sequence is strict; then every ID is asked for from here on."""
        if STRICT_NO_BLOCKS not in error.codes:
            return False
        with self._lock:
            if self._strict is None:
                timeout = STRICT_TIMEOUT_S if self._timeout_given is None else self._timeout_given
                self._strict = StrictIds(self._urls, self._sequence, self._transport.with_timeout(timeout))
        return True

    def _misread_mode(self, ids: object) -> Optional[str]:
        """Why a block answer's ``ids`` cannot be trusted: a mode this version does not know, or not
        opaque for a sequence known to be."""
        if ids is not None and ids not in ("ordered", "opaque"):
            return f"block answer has ids {ids!r}, unknown to this version; upgrade ticketd-client"
        if self._permutation is not None and ids != "opaque":
            return (
                f"sequence {self._sequence} is opaque, but this ticketd leased it as "
                f"{ids or 'a sequence without ids'}: upgrade that ticketd"
            )
        return None

    def _lease(self) -> _Block:
        path = f"/v1/sequences/{quote(self._sequence, safe='')}/blocks"

        def ask(url: str) -> Attempt:
            leased = self._transport.get_json("POST", url + path, lambda b: "first" in b and "last" in b)
            if not leased.ok:
                return leased
            misread = self._misread_mode(leased.value.get("ids"))
            if misread is not None:
                return Attempt(ok=False, error=misread, final=False)
            # The key comes with the first opaque block; not getting it counts against this URL.
            if leased.value.get("ids") == "opaque" and not self._ordered and self._permutation is None:
                codec = self.codec()
                with self._lock:
                    self._permutation = codec.permutation
            return leased

        body, index = ask_in_turn(self._urls, self._preferred, f"no ticketd leased a block of {self._sequence}", ask)
        # Stick with a URL that answers; move on from one that did not.
        self._preferred = index
        first = int(body["first"])
        last = int(body["last"])
        keep = ((last - first + 1) * round(self._prefetch_ratio * 1000)) // 1000
        lease = body.get("lease")
        return _Block(first, last, last - keep, lease if isinstance(lease, str) else None)

    def _refill(self) -> "Future[None]":
        """Starts a lease in a thread of its own (called with the lock held)."""
        self._in_flight += 1
        future: "Future[None]" = Future()
        self._waiter = future
        name = f"ticketd-lease-{self._sequence}"
        threading.Thread(target=self._lease_into, args=(future,), name=name, daemon=True).start()
        return future

    def _lease_into(self, future: "Future[None]") -> None:
        try:
            block = self._lease()
        except BaseException as error:  # noqa: BLE001 - handed to whoever waits for this lease
            with self._lock:
                self._in_flight -= 1
                self._leases_ended.notify_all()
            future.set_exception(error)
            return
        with self._lock:
            if not self._closed:
                self._blocks.append(block)
                self.leases += 1
            elif self._late is not None:
                # Leased after close(): nobody will take from it, so it is given back with the rest (if in time).
                tail = tail_of(block.lease, block.first, block.last)
                if tail is not None:
                    self._late.append(tail)
            self._in_flight -= 1
            self._leases_ended.notify_all()
        future.set_result(None)

    def _top_up(self) -> None:
        while not self._closed and len(self._blocks) + self._in_flight < self._ahead:
            self._refill()

    def _take_encoded(self) -> Optional[int]:
        """The next opaque ID, encoding the next chunk of the block when the last one is used up (lock held)."""
        if self._pos < len(self._encoded):
            self._pos += 1
            return self._encoded[self._pos - 1]
        if self._cur > self._last:
            if not self._blocks:
                return None
            block = self._blocks.popleft()
            self._cur = block.first
            self._last = block.last
            self._cur_lease = block.lease
            self._fast_end = block.prefetch_at
        if self._cur >= self._fast_end:
            self._top_up()
            self._fast_end = self._last + 1
        n = min(ENCODE_CHUNK, self._fast_end - self._cur)
        self._encoded = self._permutation.encode_run(self._cur, n)  # type: ignore[union-attr]
        self._cur += n
        self._pos = 1
        return self._encoded[0]


def _gil_enabled() -> bool:
    probe = getattr(sys, "_is_gil_enabled", None)
    return True if probe is None else bool(probe())


class _LockedCount:
    """itertools.count behind a lock, for free-threaded Python, where drawing from a count is not
    known to be atomic."""

    def __init__(self, first: int) -> None:
        self._next = first
        self._lock = threading.Lock()

    def __iter__(self) -> "_LockedCount":
        return self

    def __next__(self) -> int:
        with self._lock:
            self._next += 1
            return self._next - 1


_count: Callable[[int], Iterator[int]] = itertools.count if _gil_enabled() else _LockedCount
