"""The client's errors: a literal ``code`` each, the same as ticketd-client's (Node) and the server's
problem codes (docs/reference.md, "Errors")."""
from __future__ import annotations

from typing import Sequence


class TicketClientError(Exception):
    """Base of the client's errors; ``code`` is stable, the message is for people."""

    code = "TICKETD_CLIENT"


class NoBufferedIdsError(TicketClientError):
    """No ID is buffered for ``next_nowait()``; call ``next()`` (which waits for a lease) instead."""

    code = "TICKETD_CLIENT_EMPTY"


class StrictSequenceError(TicketClientError):
    """``next_nowait()`` on a strict sequence: each of its IDs comes from ticketd, so none is ever buffered."""

    code = "TICKETD_CLIENT_STRICT"


class LeaseFailedError(TicketClientError):
    """No ticketd URL leased a block (or a worker ID, or gave a key).

    ``codes`` holds the problem codes the servers answered with (``TICKETD_POOL_EXHAUSTED``,
    ``TICKETD_LEASE_LOST``, ``TICKETD_SEQUENCE_RETIRED``...). ``retryable`` is True when the last
    URL asked did not answer or answered a 5xx (a full pool, a restart): a later try may succeed."""

    code = "TICKETD_CLIENT_LEASE_FAILED"

    def __init__(self, message: str, codes: Sequence[str] = (), retryable: bool = False) -> None:
        super().__init__(message)
        self.codes = tuple(codes)
        self.retryable = retryable


class OpaqueIdError(TicketClientError):
    """A key, scheme or ID an opaque sequence's permutation cannot take."""

    code = "TICKETD_CLIENT_OPAQUE_ID"


class NoLeaseError(TicketClientError):
    """The Snowflake generator holds no lease now: not taken yet, lost, expired unrenewed, or closed.
    ``next_nowait()`` raises it at once; ``next()`` and ``ready()`` after waiting ``lease_wait_ms`` for one."""

    code = "TICKETD_CLIENT_NO_LEASE"


class ClockMovedBackError(TicketClientError):
    """The clock went back further than ``max_step_back_ms`` below the last timestamp used."""

    code = "TICKETD_CLIENT_CLOCK_BACK"


class ClockSkewError(TicketClientError):
    """This clock differs from the server's by more than the pool's ``maxSkewMs``."""

    code = "TICKETD_CLIENT_CLOCK_SKEW"


class SnowflakeLayoutError(TicketClientError):
    """A Snowflake layout or epoch that cannot hold the pool's worker IDs or today's time."""

    code = "TICKETD_CLIENT_SNOWFLAKE_LAYOUT"
