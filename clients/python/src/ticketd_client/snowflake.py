"""A Snowflake generator whose worker ID is leased from ticketd. An ID is (milliseconds since the
epoch, worker ID, sequence). Two rules keep IDs unique:

- Only while a lease is held, judged on the monotonic clock from when the lease was asked for (so a
  process paused past its TTL finds its lease over when it wakes), does the generator open a new
  millisecond; and it opens only milliseconds above the lease's high-water mark and above every one
  it opened before. Earlier holders of the worker ID used none of those.
- Its clock must stay within the pool's maxSkewMs of the server's, estimated as the server's time at
  the last renewal plus the monotonic time since; ticketd's high-water marks add that bound.

Within a millisecond already opened, handing an ID out is one comparison and one increment.
"""
from __future__ import annotations

import math
import os
import socket
import ssl
import threading
import time
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Union

from ._http import Transport
from .errors import ClockMovedBackError, ClockSkewError, NoLeaseError
from .lease_keeper import LeaseKeeper, pause, skew_text
from .snowflake_layout import (
    DEFAULT_SNOWFLAKE_EPOCH_MS,
    SnowflakeLayout,
    SnowflakeParts,
    _iso,
    complete_layout,
    decompose,
    first_id_of,
)
from .worker_lease import LeaseRequests

#: A step back up to this is waited out when none is given.
DEFAULT_MAX_STEP_BACK_MS = 50
#: How long next() and ready() wait for a lease when no lease_wait_ms is given.
DEFAULT_LEASE_WAIT_MS = 30_000.0


class SystemClock:
    """The clocks a generator reads: wall-clock Unix milliseconds (what goes into IDs) and monotonic
    milliseconds (what judges the lease). Tests pass their own object with the same two methods."""

    @staticmethod
    def wall_ms() -> int:
        return time.time_ns() // 1_000_000

    @staticmethod
    def mono_ms() -> float:
        return time.monotonic_ns() / 1_000_000


class Snowflake:
    """A Snowflake generator, safe to share between threads; the lease is taken by ``ready()`` or the first ``next()``.

    ``urls``: ticketd base URLs. ``pool``: the worker pool (created by an admin). ``token``: a client
    token of the pool. ``epoch_ms``: the IDs' time zero (default 2024-01-01). ``layout``: bit widths
    (default 41/10/12). ``holder``: shown to operators (default host/pid). ``max_step_back_ms``: a
    clock step back up to this is waited out; a larger one stops issuing until the clock passes the
    last timestamp. ``renew_after_ratio``: renew after this fraction of the TTL. ``timeout``: seconds
    per request. ``on_event``: called with dicts (``type``: leased, renewed, renew-failed,
    lease-ended, clock-back, skew, released). ``clock`` (an object with ``wall_ms()`` and
    ``mono_ms()``) and ``lease_requests`` (``take``, ``renew``, ``release`` as in worker_lease.py)
    replace the system clocks and ticketd's lease routes, for tests.
    """

    def __init__(
        self,
        urls: Sequence[str],
        pool: str,
        *,
        token: Optional[str] = None,
        epoch_ms: int = DEFAULT_SNOWFLAKE_EPOCH_MS,
        layout: Optional[Union[SnowflakeLayout, Mapping[str, int]]] = None,
        holder: Optional[str] = None,
        max_step_back_ms: float = DEFAULT_MAX_STEP_BACK_MS,
        renew_after_ratio: float = 1 / 3,
        timeout: Optional[float] = None,
        lease_wait_ms: float = DEFAULT_LEASE_WAIT_MS,
        clock: Any = None,
        on_event: Optional[Callable[[Dict[str, Any]], None]] = None,
        ssl_context: Optional[ssl.SSLContext] = None,
        lease_requests: Any = None,
    ) -> None:
        if isinstance(urls, str):
            urls = [urls]
        if len(urls) == 0:
            raise NoLeaseError("Snowflake needs at least one ticketd URL")
        if not lease_wait_ms >= 0:
            raise ValueError(f"lease_wait_ms must be 0 or more, not {lease_wait_ms}")
        self._pool = pool
        self._lease_wait = lease_wait_ms
        self._layout = complete_layout(layout)
        self._epoch = epoch_ms
        self._max_step_back = max_step_back_ms
        clock = clock if clock is not None else SystemClock()
        self._wall: Callable[[], int] = clock.wall_ms
        self._mono: Callable[[], float] = clock.mono_ms
        self._emit: Callable[[Dict[str, Any]], None] = on_event if on_event is not None else (lambda event: None)
        self._transport = Transport(token, timeout, ssl_context)
        # Every field below, and the keeper's, is guarded by this lock.
        self._lock = threading.RLock()
        # The millisecond opened last, the next ID in it, and the end of its sequence.
        self._ms: float = -math.inf
        self._next = 0
        self._end = 0
        #: A step back past max_step_back_ms was reported (one clock-back event per step, not per call).
        self._back_reported = False
        self._keeper = LeaseKeeper(
            requests=(
                lease_requests
                if lease_requests is not None
                else LeaseRequests([u.rstrip("/") for u in urls], pool, self._transport)
            ),
            holder=holder if holder is not None else f"{socket.gethostname()}/{os.getpid()}",
            worker_bits=self._layout.worker_bits,
            max_step_back_ms=max_step_back_ms,
            renew_after_ratio=renew_after_ratio,
            wall=self._wall,
            mono=self._mono,
            emit=self._emit,
            on_leased=self._on_leased,
            on_ended=self._on_ended,
            lock=self._lock,
        )

    def __enter__(self) -> "Snowflake":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _on_leased(self, high_water_ms: int) -> None:
        # Above the earlier holders' last millisecond, and above every one this generator opened.
        self._ms = max(self._ms, high_water_ms)
        self._end = self._next

    def _on_ended(self) -> None:
        # Nothing more on the lease that ended, not even in the millisecond open now.
        self._end = self._next

    @property
    def worker_id(self) -> Optional[int]:
        """The worker ID held now, if any."""
        held = self._keeper.held
        return None if held is None else held.worker_id

    @property
    def skew_ms(self) -> Optional[float]:
        """The clock skew measured against the server at the last lease or renewal (this clock minus the server's)."""
        return self._keeper.skew_ms

    @property
    def layout(self) -> SnowflakeLayout:
        return self._layout

    def ready(self) -> None:
        """Takes the lease (once) and returns when IDs can be issued; waits up to ``lease_wait_ms`` for
        one (a full pool, ticketd restarting), then raises NoLeaseError."""
        self._keeper.wait_for_lease(self._lease_wait, self._pool)

    def next_nowait(self) -> int:
        """The next ID without waiting for a lease (a small step back is spun out); raises NoLeaseError,
        ClockMovedBackError or ClockSkewError (Node's ``nextSync()``)."""
        now = self._wall()
        with self._lock:
            if now == self._ms and self._next < self._end:
                self._next += 1
                return self._next - 1
            id_ = self._issue(now)
            spin_until = self._mono() + self._max_step_back + 2
            while id_ is None:
                if self._mono() > spin_until:
                    raise ClockMovedBackError(
                        f"the clock has not passed {_iso(int(self._ms))} (the last timestamp used) "
                        f"within {self._max_step_back} ms"
                    )
                id_ = self._issue(self._wall())
            return id_

    def next(self) -> int:
        """The next ID; waits up to ``lease_wait_ms`` for a lease (a new one after a pause past the
        TTL) and for small clock steps back."""
        now = self._wall()
        with self._lock:
            if now == self._ms and self._next < self._end:
                self._next += 1
                return self._next - 1
        while True:
            if not self._lease_usable():
                self.ready()
                now = self._wall()
            with self._lock:
                if not self._lease_usable():
                    continue
                try:
                    id_ = self._issue(now)
                except NoLeaseError:
                    # The lease ran out between the look above and this one: wait for the next.
                    if self._keeper.closed:
                        raise
                    continue
                if id_ is not None:
                    return id_
                wait = max(1, self._ms - now + 1)
            pause(wait / 1000)
            now = self._wall()

    def decompose(self, id_: int) -> SnowflakeParts:
        """Takes an ID apart by this generator's layout and epoch."""
        return decompose(id_, self._layout, self._epoch)

    def close(self) -> None:
        """Stops renewing and releases the lease with the last timestamp used."""
        self._keeper.close(lambda: int(self._ms) if math.isfinite(self._ms) else 0)
        self._transport.close()

    def _lease_usable(self) -> bool:
        """False when no lease is held, or the one held ran out on the monotonic clock (a pause past
        the TTL), which ends it."""
        with self._lock:
            held = self._keeper.held
            if held is None:
                return False
            if self._mono() < held.expires_mono:
                return True
            self._keeper.end(f"lease of worker {held.worker_id} ran out unrenewed")
            return False

    def _issue(self, now: int) -> Optional[int]:
        """The next ID at wall time ``now``, or None when the clock must first pass the last millisecond opened
        (lock held)."""
        keeper = self._keeper
        held = keeper.held
        if held is None:
            raise NoLeaseError(f"no lease of a worker ID is held ({keeper.ended}); next() waits for one")
        mono = self._mono()
        if mono >= held.expires_mono:
            keeper.end(f"lease of worker {held.worker_id} ran out unrenewed")
            keeper.retake()
            raise NoLeaseError(
                f"the lease of worker {held.worker_id} ran out before it was renewed; nothing more is issued on it"
            )
        # The server's clock now lies in [server_ms + (mono - answered), server_ms + (mono - asked)].
        # Ahead is judged by the most it may be (a holder ahead of the server could mint past the
        # high-water mark the next holder starts from); behind by the least it surely is, since
        # minting above the high-water mark already guards that side, and a slow answer must not
        # read as a clock behind.
        since_answer = mono - held.answered_mono
        ahead = now - held.server_ms - since_answer
        behind = held.server_ms + since_answer - now
        if ahead > held.max_skew_ms or behind > held.max_skew_ms:
            skew = ahead if ahead > held.max_skew_ms else -behind
            self._emit({"type": "skew", "skew_ms": skew, "limit_ms": held.max_skew_ms})
            raise ClockSkewError(
                f"this clock is {skew_text(skew)} the server's (limit {held.max_skew_ms} ms, the pool's maxSkewMs): "
                "nothing is issued until it is back within it"
            )
        if now > self._ms:
            self._ms = now
            self._back_reported = False
            self._next = first_id_of(now, held.worker_id, self._layout, self._epoch)
            self._end = self._next + (1 << self._layout.sequence_bits)
            self._next += 1
            return self._next - 1
        # A step back past max_step_back_ms stops it at once: going on with the open millisecond's
        # sequence would freeze the time in its IDs without a word.
        step_back = self._ms - now
        if step_back > self._max_step_back:
            if not self._back_reported:
                self._emit({"type": "clock-back", "behind_ms": step_back})
            self._back_reported = True
            raise ClockMovedBackError(
                f"the clock is {step_back} ms behind the last timestamp used (more than max_step_back_ms "
                f"{self._max_step_back}): nothing is issued until it passes {_iso(int(self._ms))}"
            )
        # At or a little behind the last millisecond opened: its sequence goes on while it lasts.
        if self._next < self._end:
            self._next += 1
            return self._next - 1
        return None
