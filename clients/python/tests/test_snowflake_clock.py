"""The Snowflake generator's judgement of its clocks and its lease, with both clocks injected and
the lease routes answered in-process (pure logic: the real routes are exercised by the conformance
scenarios against a real ticketd)."""
import threading
import time
import unittest
from typing import Any, Dict, List, Optional

from ticketd_client import ClockMovedBackError, ClockSkewError, NoLeaseError, Snowflake, SnowflakeLayoutError


class SteppedClock:
    """Wall and monotonic clocks that follow the real ones, shifted at will."""

    def __init__(self) -> None:
        self.wall_offset = 0
        self.mono_offset = 0.0

    def wall_ms(self) -> int:
        return time.time_ns() // 1_000_000 + self.wall_offset

    def mono_ms(self) -> float:
        return time.monotonic_ns() / 1_000_000 + self.mono_offset


class Leases:
    """ticketd's answers to take, renew and release, as the real routes give them."""

    def __init__(
        self, worker_bits: int = 10, ttl_ms: int = 3000, max_skew_ms: int = 1000, high_water_ms: int = 0
    ) -> None:
        self.worker_bits = worker_bits
        self.ttl_ms = ttl_ms
        self.max_skew_ms = max_skew_ms
        self.high_water_ms = high_water_ms
        self.released: List[Dict[str, Any]] = []
        self.renewals = 0
        self.lock = threading.Lock()

    def _answer(self) -> Dict[str, Any]:
        now = time.time_ns() // 1_000_000
        return {
            "pool": "test", "workerId": 7, "epoch": "1", "holder": "t", "expiresAt": "", "expiresInMs": self.ttl_ms,
            "serverTimeMs": now,
            "highWaterMs": self.high_water_ms,
            "workerBits": self.worker_bits,
            "ttlMs": self.ttl_ms,
            "maxSkewMs": self.max_skew_ms,
        }

    def take(self, holder: str) -> Dict[str, Any]:
        return self._answer()

    def renew(self, worker_id: int, epoch: str, skew_ms: Optional[int]) -> Dict[str, Any]:
        with self.lock:
            self.renewals += 1
        return self._answer()

    def release(self, worker_id: int, epoch: str, last_used_ms: int) -> None:
        self.released.append({"workerId": worker_id, "epoch": epoch, "lastUsedMs": last_used_ms})


class SnowflakeClockTest(unittest.TestCase):
    def generator(
        self, clock: SteppedClock, leases: Leases, events: Optional[List[Dict[str, Any]]] = None, **options: Any
    ) -> Snowflake:
        on_event = events.append if events is not None else None
        s = Snowflake(
            ["http://unused.invalid"], "test", clock=clock, lease_requests=leases, on_event=on_event, **options
        )
        self.addCleanup(s.close)
        return s

    def test_a_small_step_back_is_waited_out_and_ids_keep_rising(self) -> None:
        clock = SteppedClock()
        s = self.generator(clock, Leases())
        s.ready()
        ids = [s.next_nowait() for _ in range(3000)]
        before = s.decompose(ids[-1]).timestamp_ms
        clock.wall_offset = -30
        started = time.monotonic()
        ids += [s.next_nowait() for _ in range(9000)]
        ids += [s.next() for _ in range(1000)]
        self.assertGreaterEqual(time.monotonic() - started, 0.025)
        self.assertTrue(all(b > a for a, b in zip(ids, ids[1:])))
        self.assertGreater(s.decompose(ids[-1]).timestamp_ms, before)
        self.assertEqual({s.decompose(i).worker_id for i in ids}, {7})

    def test_a_large_step_back_stops_it_until_the_clock_passes_the_last_timestamp(self) -> None:
        clock = SteppedClock()
        events: List[Dict[str, Any]] = []
        s = self.generator(clock, Leases(), events)
        s.ready()
        last = s.next_nowait()
        clock.wall_offset = -200
        for _ in range(3):
            with self.assertRaises(ClockMovedBackError) as caught:
                s.next_nowait()
            self.assertEqual(caught.exception.code, "TICKETD_CLIENT_CLOCK_BACK")
        self.assertEqual(len([e for e in events if e["type"] == "clock-back"]), 1)
        time.sleep(0.25)
        after = s.next_nowait()
        self.assertGreater(after, last)
        self.assertGreater(s.decompose(after).timestamp_ms, s.decompose(last).timestamp_ms)

    def test_a_clock_ahead_of_the_servers_by_more_than_max_skew_issues_nothing(self) -> None:
        clock = SteppedClock()
        events: List[Dict[str, Any]] = []
        s = self.generator(clock, Leases(max_skew_ms=100), events)
        s.ready()
        s.next_nowait()
        clock.wall_offset = 500
        with self.assertRaises(ClockSkewError) as caught:
            s.next_nowait()
        self.assertEqual(caught.exception.code, "TICKETD_CLIENT_CLOCK_SKEW")
        self.assertTrue(any(e["type"] == "skew" for e in events))
        clock.wall_offset = 0
        s.next_nowait()

    def test_a_lease_past_its_ttl_on_the_monotonic_clock_issues_nothing_more(self) -> None:
        clock = SteppedClock()
        s = self.generator(clock, Leases(ttl_ms=3000))
        s.ready()
        s.next_nowait()
        time.sleep(0.002)
        # The process was paused: the monotonic clock moved on past the TTL, the lease unrenewed.
        clock.mono_offset = 5000
        with self.assertRaises(NoLeaseError) as caught:
            s.next_nowait()
        self.assertEqual(caught.exception.code, "TICKETD_CLIENT_NO_LEASE")

    def test_it_mints_above_the_high_water_mark_and_releases_with_the_last_timestamp(self) -> None:
        clock = SteppedClock()
        leases = Leases(high_water_ms=time.time_ns() // 1_000_000 + 40)
        s = self.generator(clock, leases)
        s.ready()
        ids = [s.next() for _ in range(100)]
        self.assertGreater(s.decompose(ids[0]).timestamp_ms, leases.high_water_ms)
        s.close()
        last_used_ms = s.decompose(ids[-1]).timestamp_ms
        self.assertEqual(leases.released, [{"workerId": 7, "epoch": "1", "lastUsedMs": last_used_ms}])
        with self.assertRaises(NoLeaseError):
            s.next_nowait()

    def test_a_pool_wider_than_the_layout_is_refused_and_given_back(self) -> None:
        leases = Leases(worker_bits=12)
        s = self.generator(SteppedClock(), leases)
        with self.assertRaises(SnowflakeLayoutError):
            s.ready()
        self.assertEqual(len(leases.released), 1)

    def test_the_lease_is_renewed_in_the_background(self) -> None:
        leases = Leases(ttl_ms=300)
        s = self.generator(SteppedClock(), leases)
        s.ready()
        time.sleep(0.45)
        self.assertGreaterEqual(leases.renewals, 2)
        s.next_nowait()


if __name__ == "__main__":
    unittest.main()
