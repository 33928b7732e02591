"""The ticket client's hand-out of leased blocks across threads (pure logic: the leases come from a
stand-in for ticketd's block route; the real route is exercised by the conformance scenarios)."""
import threading
import unittest
from typing import List, Set, Tuple

from ticketd_client import NoBufferedIdsError, TicketClient
from ticketd_client.ticket_client import _Block


class LeasingInProcess(TicketClient):
    """A client whose leases are blocks of a counter, recorded, as ticketd hands them out."""

    def __init__(self, block_size: int) -> None:
        super().__init__(["http://unused.invalid"], "test")
        self.block_size = block_size
        self.leased: List[Tuple[int, int]] = []
        self.tickets = 0
        self.lease_lock = threading.Lock()

    def _lease(self) -> _Block:
        with self.lease_lock:
            self.tickets += 1
            # Blocks of both parities, as two backends would lease them: not in increasing order.
            ticket = self.tickets * 2 + (self.tickets % 2) * 1000
            first, last = ticket * self.block_size, ticket * self.block_size + self.block_size - 1
            self.leased.append((first, last))
        keep = self.block_size // 2
        return _Block(first, last, last - keep)


class BlockHandOutTest(unittest.TestCase):
    def test_threads_get_every_id_once_and_only_ids_of_leased_blocks(self) -> None:
        client = LeasingInProcess(block_size=997)
        per_thread = 40_000
        results: List[List[int]] = [[] for _ in range(8)]

        def work(k: int) -> None:
            mine = results[k]
            for i in range(per_thread):
                if i % 3 == 0:
                    try:
                        mine.append(client.next_nowait())
                        continue
                    except NoBufferedIdsError:
                        pass
                mine.append(client.next())

        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        client.close()
        ids = [i for r in results for i in r]
        self.assertEqual(len(ids), 8 * per_thread)
        self.assertEqual(len(set(ids)), len(ids))
        leased: Set[int] = set()
        for first, last in client.leased:
            leased.update(range(first, last + 1))
        self.assertEqual([i for i in ids if i not in leased], [])
        # Each thread's IDs from one block come in increasing order, and blocks are used up in turn:
        # what was leased but not handed out is at most the blocks still buffered or in hand.
        self.assertLessEqual(len(leased) - len(ids), (32 + 1) * 997)

    def test_next_nowait_refuses_before_any_lease(self) -> None:
        client = LeasingInProcess(block_size=10)
        with self.assertRaises(NoBufferedIdsError) as caught:
            client.next_nowait()
        self.assertEqual(caught.exception.code, "TICKETD_CLIENT_EMPTY")
        first = client.next()
        self.assertEqual(client.leased[0][0], first)
        self.assertEqual([client.next_nowait() for _ in range(4)], list(range(first + 1, first + 5)))
        client.close()


if __name__ == "__main__":
    unittest.main()
