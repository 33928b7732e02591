"""The worker-ID lease of a Snowflake generator: taking it, renewing it every third of its TTL in a
background timer, judging it on the monotonic clock, measuring the clock's skew against the
server's, and taking a new one by itself when it ends. The generator (snowflake.py) only asks what is held."""
from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any, Callable, Dict, Optional

from .errors import ClockMovedBackError, ClockSkewError, LeaseFailedError, NoLeaseError, SnowflakeLayoutError
from .worker_lease import LeaseRequests, lease_is_lost

#: How long to wait between tries to take a lease after one ended.
RETAKE_DELAY_S = 1.0

Event = Dict[str, Any]


class Held:
    """The lease held, as the generator judges it."""

    __slots__ = ("worker_id", "epoch", "max_skew_ms", "renew_every_ms", "expires_mono", "server_ms", "answered_mono")

    def __init__(
        self,
        worker_id: int,
        epoch: str,
        max_skew_ms: float,
        renew_every_ms: float,
        expires_mono: float,
        server_ms: float,
        answered_mono: float,
    ) -> None:
        self.worker_id = worker_id
        self.epoch = epoch
        self.max_skew_ms = max_skew_ms
        self.renew_every_ms = renew_every_ms
        #: Monotonic time after which the lease may be over (counted from when it was asked for).
        self.expires_mono = expires_mono
        # The server's clock as of its answer, which came between two monotonic instants (asked,
        # answered): counted from `answered` it can only be behind the server's, so "ahead by more
        # than maxSkewMs" is never missed.
        self.server_ms = server_ms
        self.answered_mono = answered_mono


def measured_skew(wall_asked: float, wall_answered: float, server_ms: float) -> float:
    """This clock minus the server's, as far as one round trip can tell: 0 when the server's reading fell inside it."""
    if server_ms < wall_asked:
        return wall_asked - server_ms
    if server_ms > wall_answered:
        return wall_answered - server_ms
    return 0


def skew_text(skew_ms: float) -> str:
    """A measured skew in words: "120 ms ahead of" or "40 ms behind"."""
    return f"{round(abs(skew_ms))} ms {'ahead of' if skew_ms > 0 else 'behind'}"


class LeaseKeeper:
    """The lease of one generator. Its state is guarded by the generator's lock, passed in."""

    def __init__(
        self,
        *,
        requests: LeaseRequests,
        holder: str,
        worker_bits: int,
        max_step_back_ms: float,
        renew_after_ratio: float,
        wall: Callable[[], int],
        mono: Callable[[], float],
        emit: Callable[[Event], None],
        on_leased: Callable[[int], None],
        on_ended: Callable[[], None],
        lock: threading.RLock,
    ) -> None:
        self._requests = requests
        self._holder = holder
        self._worker_bits = worker_bits
        self._max_step_back = max_step_back_ms
        self._renew_ratio = renew_after_ratio
        self._wall = wall
        self._mono = mono
        self._emit = emit
        self._on_leased = on_leased
        self._on_ended = on_ended
        self._lock = lock
        self.held: Optional[Held] = None
        #: Why no lease is held (when none is).
        self.ended = "no lease taken yet"
        self._taking: Optional["Future[None]"] = None
        self._timer: Optional[threading.Timer] = None
        self.closed = False
        #: This clock minus the server's at the last lease or renewal.
        self.skew_ms: Optional[float] = None

    def close(self, last_used: Callable[[], int]) -> None:
        """Stops renewing and releases the lease with the last millisecond used (read once nothing else can
        change it)."""
        with self._lock:
            self.closed = True
            self._cancel_timer()
            taking = self._taking
        if taking is not None:
            try:
                taking.result()
            except Exception:  # noqa: BLE001 - a take that failed while closing changes nothing
                pass
        with self._lock:
            held = self.held
            self.end("closed")
            if held is None:
                return
            last_used_ms = last_used()
        try:
            self._requests.release(held.worker_id, held.epoch, last_used_ms)
            self._emit({"type": "released", "worker_id": held.worker_id, "last_used_ms": last_used_ms})
        except Exception as error:  # noqa: BLE001 - unreleased, the lease simply runs out
            self._emit({"type": "lease-ended", "worker_id": held.worker_id, "reason": f"release failed: {error}"})

    def take(self) -> None:
        """Takes a lease, single-flight; returns once it is held (or raises why not)."""
        with self._lock:
            future = self._taking
            mine = future is None
            if mine:
                future = self._taking = Future()
        if mine:
            try:
                self._take_once()
                future.set_result(None)  # type: ignore[union-attr]
            except BaseException as error:  # noqa: BLE001 - every caller waiting on this take gets it
                if isinstance(error, LeaseFailedError) and not self.closed:
                    self._emit({"type": "take-failed", "error": str(error), "codes": list(error.codes)})
                future.set_exception(error)  # type: ignore[union-attr]
            finally:
                with self._lock:
                    self._taking = None
        future.result()  # type: ignore[union-attr]

    def wait_for_lease(self, wait_ms: float, pool: str) -> None:
        """Returns once a lease is held, trying again every RETAKE_DELAY_S while ticketd may yet grant
        one (unreachable, restarting, or the pool full: 503 TICKETD_POOL_EXHAUSTED), for up to
        ``wait_ms``; then NoLeaseError from the last failure. A refusal (a 4xx, a layout or clock the
        lease cannot be used with) and a closed generator raise at once."""
        deadline = self._mono() + wait_ms
        while self.held is None:
            if self.closed:
                raise NoLeaseError("generator is closed")
            try:
                self.take()
            except LeaseFailedError as error:
                if not error.retryable:
                    raise
                left = deadline - self._mono()
                if left <= 0:
                    raise NoLeaseError(
                        f"no lease of a worker ID of pool {pool} within {wait_ms:g} ms (lease_wait_ms): {error}"
                    ) from error
                pause(min(RETAKE_DELAY_S, left / 1000))

    def _take_once(self) -> None:
        asked = self._mono()
        wall_asked = self._wall()
        lease = self._requests.take(self._holder)
        answered = self._mono()
        skew = measured_skew(wall_asked, self._wall(), lease["serverTimeMs"])
        self.skew_ms = skew
        refusal = self._refusal(lease, skew)
        if refusal is not None or self.closed:
            try:
                self._requests.release(lease["workerId"], lease["epoch"], lease["highWaterMs"])
            except Exception:  # noqa: BLE001 - an unreleased lease runs out by itself
                pass
            if refusal is not None:
                raise refusal
            return
        # Earlier holders used timestamps up to the high-water mark: start above it.
        wait = lease["highWaterMs"] - self._wall() + 1
        if wait > 0:
            pause(wait / 1000)
        with self._lock:
            self._on_leased(lease["highWaterMs"])
            self.held = Held(
                worker_id=lease["workerId"],
                epoch=lease["epoch"],
                max_skew_ms=lease["maxSkewMs"],
                renew_every_ms=max(100, lease["ttlMs"] * self._renew_ratio),
                expires_mono=asked + lease["expiresInMs"],
                server_ms=lease["serverTimeMs"],
                answered_mono=answered,
            )
            renew_every = self.held.renew_every_ms
            # Inside the lock: no ID is minted on the new lease before its event is seen.
            self._emit(
                {
                    "type": "leased",
                    "worker_id": lease["workerId"],
                    "epoch": lease["epoch"],
                    "expires_in_ms": lease["expiresInMs"],
                    "high_water_ms": lease["highWaterMs"],
                }
            )
        self._schedule(renew_every, self._renew)

    def _refusal(self, lease: Dict[str, Any], skew: float) -> Optional[Exception]:
        """Why a lease cannot be used here: the layout cannot hold its worker ID, or this clock is off the server's."""
        if lease["workerBits"] > self._worker_bits:
            return SnowflakeLayoutError(
                f"pool {lease['pool']} has {lease['workerBits']}-bit worker IDs; "
                f"layout.worker_bits is {self._worker_bits}"
            )
        if abs(skew) > lease["maxSkewMs"]:
            self._emit({"type": "skew", "skew_ms": skew, "limit_ms": lease["maxSkewMs"]})
            return ClockSkewError(
                f"this clock is {skew_text(skew)} the server's (limit {lease['maxSkewMs']} ms, the pool's maxSkewMs); "
                "lease given back"
            )
        wait = lease["highWaterMs"] - self._wall()
        if wait > 2 * lease["maxSkewMs"] + self._max_step_back:
            return ClockMovedBackError(
                f"the worker ID's earlier holders used timestamps {wait} ms ahead of this clock; lease given back"
            )
        return None

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _schedule(self, ms: float, action: Callable[[], None]) -> None:
        with self._lock:
            self._cancel_timer()
            if self.closed:
                return
            timer = threading.Timer(ms / 1000, action)
            timer.daemon = True
            self._timer = timer
        timer.start()

    def _renew(self) -> None:
        with self._lock:
            held = self.held
            if held is None or self.closed:
                return
            skew = self.skew_ms
        asked = self._mono()
        wall_asked = self._wall()
        try:
            lease = self._requests.renew(held.worker_id, held.epoch, None if skew is None else round(skew))
        except Exception as error:  # noqa: BLE001 - judged below: lost, or out of reach for now
            self._renew_failed(held, error)
            return
        with self._lock:
            if self.held is not held:
                return
            answered = self._mono()
            self.skew_ms = measured_skew(wall_asked, self._wall(), lease["serverTimeMs"])
            held.expires_mono = asked + lease["expiresInMs"]
            held.server_ms = lease["serverTimeMs"]
            held.answered_mono = answered
            skew_now = self.skew_ms
        self._emit({"type": "renewed", "worker_id": held.worker_id, "skew_ms": skew_now})
        if abs(skew_now) > held.max_skew_ms:
            self._emit({"type": "skew", "skew_ms": skew_now, "limit_ms": held.max_skew_ms})
        self._schedule(held.renew_every_ms, self._renew)

    def _renew_failed(self, held: Held, error: Exception) -> None:
        with self._lock:
            if self.held is not held:
                return
            if lease_is_lost(error):
                self.end(f"ticketd answered that the lease of worker {held.worker_id} is lost")
                lost = True
            else:
                lost = False
                left_ms = held.expires_mono - self._mono()
                if left_ms <= 0:
                    # Over: an idle generator learns it here rather than at its next ID.
                    self.end(f"lease of worker {held.worker_id} ran out unrenewed")
        if lost:
            self.retake()
            return
        self._emit({"type": "renew-failed", "worker_id": held.worker_id, "error": str(error), "left_ms": left_ms})
        if left_ms <= 0:
            self.retake()
            return
        # Try again while the lease lasts.
        self._schedule(max(50, min(1000, left_ms / 4)), self._renew)

    def end(self, reason: str) -> None:
        """Ends the lease held: nothing more is issued on it, not even in the millisecond open now."""
        with self._lock:
            held = self.held
            self.held = None
            self.ended = reason
            self._on_ended()
            self._cancel_timer()
        if held is not None and not self.closed:
            self._emit({"type": "lease-ended", "worker_id": held.worker_id, "reason": reason})

    def retake(self) -> None:
        """Takes a new lease in the background, trying again until one is held or the generator is closed."""
        with self._lock:
            if self.closed or self._taking is not None:
                return
        threading.Thread(target=self._retake_once, name="ticketd-worker-lease", daemon=True).start()

    def _retake_once(self) -> None:
        try:
            self.take()
        except Exception:  # noqa: BLE001 - tried again after RETAKE_DELAY_S
            self._schedule(RETAKE_DELAY_S * 1000, self.retake)


def pause(seconds: float) -> None:
    """Waits ``seconds``."""
    # An Event's wait, not time.sleep: under libfaketime with a stepped wall clock, time.sleep's
    # absolute clock_nanosleep fails with EINVAL, and a test of clock steps runs exactly there.
    threading.Event().wait(seconds)
