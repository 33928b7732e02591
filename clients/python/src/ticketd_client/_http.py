"""The client's requests to ticketd: each URL in turn, JSON answers, headers, timeouts, kept-alive connections."""
from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, TypeVar
from urllib.parse import urlsplit

from .errors import LeaseFailedError, TicketClientError

#: Per-request timeout in seconds when the options give none.
DEFAULT_TIMEOUT_S = 2.0

T = TypeVar("T")


class Attempt(NamedTuple):
    """What one URL answered: a value, or why not and whether another URL would answer the same."""

    ok: bool
    value: Any = None
    error: str = ""
    final: bool = False
    code: Optional[str] = None


def ask_in_turn(urls: Sequence[str], start: int, failure: str, ask: Callable[[str], Attempt]) -> Tuple[Any, int]:
    """Asks the URLs in turn from ``start``, each once, until one answers: a final refusal (a 4xx)
    stops, a 5xx or a network error moves on. Raises LeaseFailedError naming every URL's reason."""
    errors: List[str] = []
    codes: List[str] = []
    retryable = True
    for attempt in range(len(urls)):
        index = (start + attempt) % len(urls)
        url = urls[index]
        try:
            answer = ask(url)
        except (OSError, http.client.HTTPException) as error:
            errors.append(f"{url}: {network_reason(error)}")
            continue
        except (TicketClientError, ValueError, KeyError, TypeError) as error:
            # An answer this client cannot use (a key the permutation refuses, a malformed body):
            # named with its URL, as the Node client does, and the next URL is asked.
            errors.append(f"{url}: {type(error).__name__}: {error}")
            continue
        if answer.ok:
            return answer.value, index
        errors.append(f"{url}: {answer.error}")
        if answer.code is not None:
            codes.append(answer.code)
        if answer.final:
            retryable = False
            break
    raise LeaseFailedError(f"{failure}: {'; '.join(errors)}", codes, retryable)


def network_reason(error: BaseException) -> str:
    """Why a request got no answer, with a hint for the errors a newcomer meets first."""
    if isinstance(error, (socket.timeout, TimeoutError)):
        return "no answer in time (timeout)"
    if isinstance(error, ConnectionRefusedError):
        return f"{error} (nothing listens there: is ticketd running on that port?)"
    if isinstance(error, socket.gaierror):
        return f"{error} (no such host, or it could not be resolved now)"
    if isinstance(error, (ConnectionResetError, http.client.RemoteDisconnected)):
        return f"{error} (the connection was closed while asking)"
    return f"{type(error).__name__}: {error}"


# A kept-alive connection the server closed while idle fails on first use without an answer: those
# are retried once on a new connection. A lease repeated that way only leaves a gap (the first
# lease, if it happened, is never handed out), never a duplicate.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


class Transport:
    """Requests of one client: its token, timeout and TLS context, and a pool of kept-alive
    connections per origin (a connection is used by one thread at a time)."""

    def __init__(
        self, token: Optional[str] = None, timeout: Optional[float] = None, ssl_context: Optional[ssl.SSLContext] = None
    ) -> None:
        self._token = token
        self._timeout = DEFAULT_TIMEOUT_S if timeout is None else timeout
        self._ssl = ssl_context
        self._idle: Dict[Tuple[str, str, int], List[http.client.HTTPConnection]] = {}
        self._lock = threading.Lock()
        self._closed = False

    @property
    def timeout(self) -> float:
        return self._timeout

    def with_timeout(self, timeout: float) -> "Transport":
        """A transport like this one with another timeout (its own connections)."""
        return Transport(self._token, timeout, self._ssl)

    def close(self) -> None:
        """Closes the idle connections; those in use close when their request ends."""
        with self._lock:
            self._closed = True
            idle = [c for conns in self._idle.values() for c in conns]
            self._idle.clear()
        for conn in idle:
            conn.close()

    def _connect(self, origin: Tuple[str, str, int]) -> Tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            conns = self._idle.get(origin)
            if conns:
                return conns.pop(), True
        scheme, host, port = origin
        if scheme == "https":
            return http.client.HTTPSConnection(host, port, timeout=self._timeout, context=self._ssl), False
        return http.client.HTTPConnection(host, port, timeout=self._timeout), False

    def _keep(self, origin: Tuple[str, str, int], conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if not self._closed:
                self._idle.setdefault(origin, []).append(conn)
                return
        conn.close()

    def request(self, method: str, url: str, body: Optional[Dict[str, Any]] = None) -> Tuple[int, str, bytes]:
        """One request: status, reason and body. Raises OSError or HTTPException when nothing answered."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or parts.hostname is None:
            raise http.client.InvalidURL(f"not an http:// or https:// URL: {url}")
        origin = (parts.scheme, parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        headers = {"accept": "application/json"}
        if self._token is not None:
            headers["authorization"] = f"Bearer {self._token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["content-type"] = "application/json"
        for _ in range(2):
            conn, reused = self._connect(origin)
            try:
                conn.request(method, target, body=data, headers=headers)
                res = conn.getresponse()
                payload = res.read()
            except _STALE:
                conn.close()
                if reused:
                    continue
                raise
            except BaseException:
                conn.close()
                raise
            if res.will_close:
                conn.close()
            else:
                self._keep(origin, conn)
            return res.status, res.reason, payload
        raise http.client.RemoteDisconnected("the connection was closed twice without an answer")

    def get_json(
        self,
        method: str,
        url: str,
        complete: Callable[[Dict[str, Any]], bool] = lambda body: True,
        body: Optional[Dict[str, Any]] = None,
    ) -> Attempt:
        """The JSON body of a 200 that ``complete`` accepts; otherwise the status, the problem's title and detail."""
        status, reason, payload = self.request(method, url, body)
        text = payload.decode("utf-8", "replace")
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        answer = parsed if isinstance(parsed, dict) else None
        if status == 200 and answer is not None and complete(answer):
            return Attempt(ok=True, value=answer)
        title = answer.get("title") if answer is not None and isinstance(answer.get("title"), str) else reason
        if answer is not None:
            detail = answer.get("detail") if isinstance(answer.get("detail"), str) else ""
        else:
            detail = f"not JSON: {text[:80]!r}"
        code = answer.get("code") if answer is not None and isinstance(answer.get("code"), str) else None
        # A 4xx (unknown sequence, bad name, exhausted, no token, retired) is the same everywhere: do not fail over.
        error = f"{status} {title}{': ' + detail if detail else ''}"
        return Attempt(ok=False, error=error, final=status < 500, code=code)
