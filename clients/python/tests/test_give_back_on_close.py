"""close() gives the unused IDs of leased blocks back: once, from where the client got to, bounded in
time; a failure is reported as lost (pure logic: a stand-in for ticketd's block and return routes on
a loopback port; the real routes are exercised by the conformance scenarios)."""
import json
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Tuple

from ticketd_client import LeaseFailedError, TicketClient


class StandIn:
    """Blocks t·1000 .. t·1000 + 999 leased as L<t> (with a lease unless told not to); returns recorded."""

    def __init__(self, return_status: int = 200, leased: bool = True, hang_s: float = 0.0) -> None:
        self.returns: List[Dict[str, Any]] = []
        self.tickets = 0
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
                status, body = stand_in.answer(self.path, self.rfile.read(int(self.headers.get("content-length") or 0)))
                payload = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (its give_back_timeout), as it should

        self.return_status = return_status
        self.leased = leased
        self.hang_s = hang_s
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, path: str, raw: bytes) -> Tuple[int, Dict[str, Any]]:
        if path.endswith("/blocks/return"):
            body = json.loads(raw)
            with self.lock:
                self.returns.append(body)
            if self.hang_s > 0:
                time.sleep(self.hang_s)
            if self.return_status != 200:
                return self.return_status, {"title": "refused", "code": "TICKETD_LEASE_RETURNED"}
            t = int(body["lease"][1:])
            return 200, {"sequence": "s", "returned": str(t * 1000 + 999 - int(body["from"]) + 1)}
        with self.lock:
            self.tickets += 1
            t = self.tickets
        block: Dict[str, Any] = {"sequence": "s", "first": str(t * 1000), "last": str(t * 1000 + 999), "ids": "ordered"}
        if self.leased:
            block["lease"] = f"L{t}"
        return 200, block

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class GiveBackOnCloseTest(unittest.TestCase):
    def stand_in(self, **options: Any) -> StandIn:
        s = StandIn(**options)
        self.addCleanup(s.close)
        return s

    def test_close_gives_the_rest_of_the_block_back_once_and_refuses_later_calls(self) -> None:
        s = self.stand_in()
        events: List[Dict[str, Any]] = []
        client = TicketClient([s.url], "s", on_event=events.append)
        self.assertEqual([client.next() for _ in range(3)], [1000, 1001, 1002])
        client.close()
        client.close()
        self.assertEqual(s.returns, [{"lease": "L1", "from": "1003"}])
        self.assertEqual(events, [{"type": "returned", "first": 1003, "last": 1999, "count": 997}])
        with self.assertRaises(LeaseFailedError):
            client.next()

    def test_blocks_buffered_ahead_are_given_back_whole(self) -> None:
        s = self.stand_in()
        events: List[Dict[str, Any]] = []
        client = TicketClient([s.url], "s", on_event=events.append)
        # Past the prefetch point (half the block): the next block is leased ahead.
        for _ in range(600):
            client.next()
        deadline = time.monotonic() + 5
        while s.tickets < 2 and time.monotonic() < deadline:
            time.sleep(0.005)
        client.close()
        self.assertEqual(s.returns, [{"lease": "L1", "from": "1600"}, {"lease": "L2", "from": "2000"}])
        self.assertEqual(sum(e["count"] for e in events), 400 + 1000)

    def test_no_id_handed_out_by_threads_racing_close_is_given_back(self) -> None:
        s = self.stand_in()
        events: List[Dict[str, Any]] = []
        # Time enough for every block buffered to go back on a loaded machine: this judges what, not how fast.
        client = TicketClient([s.url], "s", on_event=events.append, give_back_timeout=20.0)
        client.next()
        handed_out: List[int] = []
        started = threading.Barrier(5)

        def work() -> None:
            mine: List[int] = []
            started.wait()
            try:
                while True:
                    mine.append(client.next())
            except LeaseFailedError:
                handed_out.extend(mine)

        workers = [threading.Thread(target=work) for _ in range(4)]
        for w in workers:
            w.start()
        started.wait()
        time.sleep(0.05)
        client.close()
        for w in workers:
            w.join()
        self.assertGreater(len(handed_out), 0)
        self.assertGreater(len(events), 0)
        given_back = 0
        for e in events:
            self.assertEqual(e["type"], "returned")
            given_back += e["count"]
            self.assertEqual([i for i in handed_out if e["first"] <= i <= e["last"]], [])
        # Every ID leased is handed out, given back, or drawn by a thread that met the close (a gap).
        self.assertEqual(len(handed_out), len(set(handed_out)))
        self.assertLessEqual(len(handed_out) + 1 + given_back, s.tickets * 1000)
        self.assertGreaterEqual(len(handed_out) + 1 + given_back, s.tickets * 1000 - 4)

    def test_a_refused_or_late_return_is_reported_as_lost_and_close_is_bounded(self) -> None:
        s = self.stand_in(return_status=409)
        events: List[Dict[str, Any]] = []
        client = TicketClient([s.url], "s", on_event=events.append)
        client.next()
        client.close()
        self.assertEqual(len(s.returns), 1)
        self.assertEqual(events[0]["type"], "return-failed")
        self.assertEqual(events[0]["count"], 999)
        self.assertEqual(events[0]["codes"], ["TICKETD_LEASE_RETURNED"])

        hung = self.stand_in(hang_s=10.0)
        events.clear()
        client = TicketClient([hung.url, hung.url], "s", on_event=events.append, give_back_timeout=0.3)
        client.next()
        began = time.monotonic()
        client.close()
        took = time.monotonic() - began
        # Unbounded, it would wait 10 s for each URL.
        self.assertLess(took, 3.0)
        self.assertEqual([e["type"] for e in events], ["return-failed"])

    def test_a_block_without_a_lease_or_a_zero_timeout_gives_nothing_back(self) -> None:
        events: List[Dict[str, Any]] = []
        s = self.stand_in(leased=False)
        with TicketClient([s.url], "s", on_event=events.append) as client:
            client.next()
        t = self.stand_in()
        with TicketClient([t.url], "s", on_event=events.append, give_back_timeout=0) as client:
            client.next()
        self.assertEqual(s.returns + t.returns, [])
        self.assertEqual(events, [])


if __name__ == "__main__":
    unittest.main()
