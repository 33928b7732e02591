"""A strict sequence's IDs, asked for from ticketd each time (docs/strict-sequences.md): no block is
ever buffered, since IDs served from a client's own block would leave real-time order.

Calls made while a request is in flight wait for the next one, which asks for all of them at once
(coalesced). They never join the request in flight: it was sent before they were made, and an
answer given elsewhere since may hold greater IDs than its own. The thread whose call finds no
request in flight sends it; when it is answered, the first call still waiting sends the next.
"""
from __future__ import annotations

import threading
from typing import List, Optional, Sequence
from urllib.parse import quote

from ._http import Attempt, Transport, ask_in_turn
from .errors import LeaseFailedError, StrictSequenceError

#: The problem code of ``POST .../blocks`` for a strict sequence.
STRICT_NO_BLOCKS = "TICKETD_STRICT_NO_BLOCKS"
#: Most IDs one request asks for (ticketd's TICKETD_MAX_COUNT is 10000 unless set lower).
STRICT_MAX_PER_REQUEST = 1000
#: Per-request timeout when none is given: above the 3 s a front end waits out a leader change.
STRICT_TIMEOUT_S = 5.0


class _Waiter:
    __slots__ = ("count", "event", "done", "ids", "error")

    def __init__(self, count: int) -> None:
        self.count = count
        self.event = threading.Event()
        self.done = False
        self.ids: List[int] = []
        self.error: Optional[BaseException] = None


class StrictIds:
    """The IDs of one strict sequence for one client: one request in flight at most, the calls behind it coalesced."""

    def __init__(self, urls: Sequence[str], sequence: str, transport: Transport) -> None:
        self._urls = list(urls)
        self._sequence = sequence
        self._transport = transport
        self._lock = threading.Lock()
        self._waiting: List[_Waiter] = []
        self._in_flight = False
        self._closed = False
        self._preferred = 0
        #: Requests sent so far (for tests and metrics: fewer than calls when calls were coalesced).
        self.requests = 0

    def next(self) -> int:
        """One ID, from the next request sent."""
        return self._ask(1)[0]

    def batch(self, count: int) -> List[int]:
        """``count`` IDs in increasing order, in requests of at most STRICT_MAX_PER_REQUEST, each sent once the
        one before is answered."""
        ids: List[int] = []
        left = count
        while left > 0:
            ids.extend(self._ask(min(left, STRICT_MAX_PER_REQUEST)))
            left -= STRICT_MAX_PER_REQUEST
        return ids

    def refuse_nowait(self) -> int:
        """``next_nowait()`` on a strict sequence."""
        raise StrictSequenceError(
            f"sequence {self._sequence} is strict: each ID comes from ticketd, none is buffered; call next()"
        )

    def close(self) -> None:
        """Refuses the calls still waiting; the request in flight is answered to nobody."""
        with self._lock:
            self._closed = True
            waiting, self._waiting = self._waiting, []
        for waiter in waiting:
            waiter.error = LeaseFailedError("client is closed")
            waiter.done = True
            waiter.event.set()

    def _ask(self, count: int) -> List[int]:
        waiter = _Waiter(count)
        with self._lock:
            if self._closed:
                raise LeaseFailedError("client is closed")
            self._waiting.append(waiter)
            lead = not self._in_flight
            self._in_flight = True
        while True:
            if lead:
                self._send()
            waiter.event.wait()
            with self._lock:
                if waiter.done:
                    break
                # Not answered: this call was chosen to send the next request.
                waiter.event.clear()
                lead = True
        if waiter.error is not None:
            raise waiter.error
        return waiter.ids

    def _send(self) -> None:
        """Sends one request for the calls waiting now (as many as fit), then hands the turn on."""
        with self._lock:
            total = 0
            taken = 0
            while taken < len(self._waiting) and total + self._waiting[taken].count <= STRICT_MAX_PER_REQUEST:
                total += self._waiting[taken].count
                taken += 1
            batch, self._waiting = self._waiting[:taken], self._waiting[taken:]
        try:
            ids = self._request(total) if total > 0 else []
            at = 0
            for waiter in batch:
                waiter.ids = ids[at : at + waiter.count]
                at += waiter.count
        except BaseException as error:  # noqa: BLE001 - every waiter of this request gets its failure
            for waiter in batch:
                waiter.error = error
        for waiter in batch:
            waiter.done = True
            waiter.event.set()
        with self._lock:
            if self._waiting and not self._closed:
                self._waiting[0].event.set()
            else:
                self._in_flight = False

    def _request(self, count: int) -> List[int]:
        self.requests += 1
        url_path = f"/v1/sequences/{quote(self._sequence, safe='')}/ids?count={count}"

        def ask(url: str) -> Attempt:
            return self._transport.get_json(
                "POST", url + url_path, lambda b: isinstance(b.get("ids"), list) and len(b["ids"]) == count
            )

        failure = f"no ticketd issued IDs of strict sequence {self._sequence}"
        value, index = ask_in_turn(self._urls, self._preferred, failure, ask)
        self._preferred = index
        return [int(i) for i in value["ids"]]
