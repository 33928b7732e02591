"""A worker-ID lease from ticketd's pools: take, renew and release over HTTP."""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence
from urllib.parse import quote

from ._http import Attempt, Transport, ask_in_turn
from .errors import LeaseFailedError


class LeaseRequests:
    """The lease routes of one pool; the URL that answered last is where the next call starts."""

    def __init__(self, urls: Sequence[str], pool: str, transport: Transport) -> None:
        self._urls = list(urls)
        self._pool = pool
        self._transport = transport
        self._preferred = 0

    def take(self, holder: str) -> Dict[str, Any]:
        """Takes a free worker ID of the pool."""
        return self._post("leases", {"holder": holder}, f"no ticketd leased a worker ID of pool {self._pool}")

    def renew(self, worker_id: int, epoch: str, skew_ms: Optional[int]) -> Dict[str, Any]:
        """Extends the lease; reports the skew measured at the last renewal."""
        body: Dict[str, Any] = {"epoch": epoch}
        if skew_ms is not None:
            body["skewMs"] = skew_ms
        failure = f"no ticketd renewed worker {worker_id} of pool {self._pool}"
        return self._post(f"leases/{worker_id}/renew", body, failure)

    def release(self, worker_id: int, epoch: str, last_used_ms: int) -> None:
        """Ends the lease: nothing at or after last_used_ms + 1 was issued on it."""
        failure = f"no ticketd released worker {worker_id} of pool {self._pool}"
        self._post(f"leases/{worker_id}/release", {"epoch": epoch, "lastUsedMs": last_used_ms}, failure)

    def _post(self, path: str, body: Dict[str, Any], failure: str) -> Dict[str, Any]:
        target = f"/v1/worker-pools/{quote(self._pool, safe='')}/{path}"

        def ask(url: str) -> Attempt:
            return self._transport.get_json("POST", url + target, body=body)

        value, index = ask_in_turn(self._urls, self._preferred, failure, ask)
        self._preferred = index
        return value  # type: ignore[no-any-return]


def lease_is_lost(error: BaseException) -> bool:
    """True when ticketd answered that the lease is gone (TICKETD_LEASE_LOST), not that it was out of reach."""
    return isinstance(error, LeaseFailedError) and "TICKETD_LEASE_LOST" in error.codes
