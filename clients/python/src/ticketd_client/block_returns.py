"""Giving the unused tails of leased blocks back to ticketd (``POST /v1/sequences/{name}/blocks/return``)
when a client closes: each once, each URL at most once, all within one deadline. A tail that is not
taken is lost, which only leaves a gap: nothing is retried past the deadline."""
from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence
from urllib.parse import quote

from ._http import Attempt, Transport, ask_in_turn
from .errors import LeaseFailedError

#: Seconds close() may spend giving blocks back when the options give no timeout.
DEFAULT_GIVE_BACK_TIMEOUT_S = 1.0


class Tail(NamedTuple):
    """A block's unused IDs first..last (its own, before any permutation) and the lease that proves it was leased."""

    lease: str
    first: int
    last: int


def tail_of(lease: Optional[str], first: int, last: int) -> Optional[Tail]:
    """The IDs first..last of a block leased with ``lease``; None when none is left or it cannot be given back."""
    if lease is None or first > last:
        return None
    return Tail(lease, first, last)


def give_back(
    transport: Transport,
    urls: Sequence[str],
    start: int,
    sequence: str,
    tails: List[Tail],
    deadline: float,
    emit: Callable[[Dict[str, Any]], None],
) -> None:
    """Gives each tail back in turn until ``deadline`` (time.monotonic()); reports each outcome through ``emit``."""
    path = f"/v1/sequences/{quote(sequence, safe='')}/blocks/return"
    for tail in tails:
        count = tail.last - tail.first + 1

        def ask(url: str, tail: Tail = tail) -> Attempt:
            left = deadline - time.monotonic()
            if left <= 0:
                return Attempt(ok=False, error="no time left (give_back_timeout)", final=True)
            # Each request within what is left of the deadline, on connections of its own.
            bounded = transport.with_timeout(min(left, transport.timeout))
            try:
                body = {"lease": tail.lease, "from": str(tail.first)}
                return bounded.get_json("POST", url + path, lambda b: isinstance(b.get("returned"), str), body)
            finally:
                bounded.close()

        failure = f"no ticketd took back IDs {tail.first}..{tail.last} of {sequence}"
        try:
            answer, _ = ask_in_turn(urls, start, failure, ask)
            returned = int(answer["returned"])
        except LeaseFailedError as error:
            event = {"type": "return-failed", "first": tail.first, "last": tail.last, "count": count}
            emit({**event, "error": str(error), "codes": list(error.codes)})
            continue
        except ValueError as error:
            event = {"type": "return-failed", "first": tail.first, "last": tail.last, "count": count}
            emit({**event, "error": f"answer has returned {answer['returned']!r}: {error}", "codes": []})
            continue
        emit({"type": "returned", "first": tail.first, "last": tail.last, "count": returned})
