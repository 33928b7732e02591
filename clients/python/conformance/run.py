"""The Python client's side of the conformance scenarios (clients/conformance.md). The jest file
test/integration/python-client.test.ts starts the servers, causes the faults, and judges what these
commands print; they only use the client as an application would and report what it did.

    python3 run.py hand-out  <urls> <sequence> <threads> <seconds> <ids-file> [pause-s]
        IDs one per line (a pause after every 20); a summary; ends early on SIGTERM
    python3 run.py opaque    <urls> <sequence> <token> <count>                    pairs (opaque ID, decode)
    python3 run.py strict    <urls> <sequence> <threads> <calls-per-thread>       each call's ID and times
    python3 run.py retired   <urls> <sequence> <block-size>                      waits for a line on stdin
    python3 run.py https     <urls> <sequence> <ca.pem> <client.pem> <client.key>  with and without a client certificate
    python3 run.py close-returns <urls> <sequence> <token> <take> <then>          two clients, each closed

Every command prints one JSON line last: {"scenario": ..., ...}. URLs are comma-separated.
"""
from __future__ import annotations

import json
import os
import signal
import ssl
import sys
import threading
import time
from typing import Any, Dict, List, Tuple

from ticketd_client import LeaseFailedError, StrictSequenceError, TicketClient, TicketClientError


def report(body: Dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(body) + "\n")
    sys.stdout.flush()


def hand_out(urls: List[str], sequence: str, threads: int, seconds: float, ids_file: str, pause_s: float = 0.0) -> None:
    """Threads calling next() for a while (or until SIGTERM).

    Every ID handed out is written, every failed call counted.
    """
    # TICKETD_TIMEOUT_S: the per-request timeout, for runs on a machine too loaded for the default.
    timeout = float(os.environ.get("TICKETD_TIMEOUT_S", "0")) or None
    client = TicketClient(urls, sequence, timeout=timeout)
    lock = threading.Lock()
    failures: List[str] = []
    counts = [0] * threads
    until = time.monotonic() + seconds
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    out = open(ids_file, "w", encoding="ascii")

    def work(k: int) -> None:
        mine: List[int] = []
        while time.monotonic() < until and not stop.is_set():
            try:
                mine.append(client.next())
                if pause_s > 0 and len(mine) % 20 == 0:
                    time.sleep(pause_s)
            except TicketClientError as error:
                with lock:
                    failures.append(f"{error.code}: {error}")
                time.sleep(0.05)
            if len(mine) >= 500:
                with lock:
                    out.write("".join(f"{i}\n" for i in mine))
                counts[k] += len(mine)
                mine = []
        with lock:
            out.write("".join(f"{i}\n" for i in mine))
        counts[k] += len(mine)

    workers = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    out.close()
    leases = client.leases
    client.close()
    report(
        {
            "scenario": "hand-out",
            "ids": sum(counts),
            "failed": len(failures),
            "firstFailures": failures[:5],
            "leases": leases,
        }
    )


def opaque(urls: List[str], sequence: str, token: str, count: int) -> None:
    """Opaque IDs handed out with the sequence's token, each with the client's own decoding; and the key refused
    without it."""
    client = TicketClient(urls, sequence, token=token)
    ids = [client.next() for _ in range(count)]
    codec = client.codec()
    pairs = []
    for id_ in ids:
        ordered = codec.decode(id_)
        pairs.append([str(id_), str(ordered), codec.encode(ordered) == id_])
    client.close()
    without = TicketClient(urls, sequence)
    try:
        without.codec()
        refused: Any = None
    except LeaseFailedError as error:
        refused = {"code": error.code, "codes": list(error.codes)}
    finally:
        without.close()
    report({"scenario": "opaque-decodes-back", "ids": codec.ids, "pairs": pairs, "withoutToken": refused})


def strict(urls: List[str], sequence: str, threads: int, calls: int) -> None:
    """Threads calling next() at once on a strict sequence; each call's ID with when it began and ended."""
    client = TicketClient(urls, sequence)
    first = client.next()
    lock = threading.Lock()
    done: List[List[Any]] = []
    failures: List[str] = []
    start = threading.Barrier(threads)

    def work() -> None:
        start.wait()
        for _ in range(calls):
            began = time.monotonic_ns()
            try:
                id_ = client.next()
            except TicketClientError as error:
                with lock:
                    failures.append(f"{error.code}: {error}")
                continue
            ended = time.monotonic_ns()
            with lock:
                done.append([str(id_), began, ended])

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    try:
        client.next_nowait()
        nowait: Any = None
    except StrictSequenceError as error:
        nowait = error.code
    batch = [str(i) for i in client.next_batch(5)]
    requests = client._strict.requests if client._strict is not None else 0  # noqa: SLF001 - reported for the test
    client.close()
    report(
        {
            "scenario": "strict-coalesced",
            "first": str(first),
            "calls": done,
            "failed": failures,
            "requests": requests,
            "nowait": nowait,
            "batch": batch,
            "strict": client.strict,
        }
    )


def retired(urls: List[str], sequence: str, block_size: int) -> None:
    """One ID, then (once stdin says the sequence is retired) next() until it fails: how many more and why."""
    client = TicketClient(urls, sequence)
    first = client.next()
    report({"event": "first", "id": str(first)})
    sys.stdin.readline()
    after: List[str] = []
    refused: Any = None
    for _ in range(block_size * 4):
        try:
            after.append(str(client.next()))
        except TicketClientError as error:
            refused = {"code": error.code, "codes": list(getattr(error, "codes", ())), "message": str(error)}
            break
    client.close()
    report({"scenario": "retired-refused", "first": str(first), "after": after, "refused": refused})


def https(urls: List[str], sequence: str, ca: str, cert: str, key: str) -> None:
    """IDs over HTTPS with the CA and a client certificate, and what happens without the certificate."""
    context = ssl.create_default_context(cafile=ca)
    context.load_cert_chain(cert, key)
    with TicketClient(urls, sequence, ssl_context=context) as client:
        ids = [str(client.next()) for _ in range(100)]
    refused: Any = None
    with TicketClient(urls, sequence, ssl_context=ssl.create_default_context(cafile=ca)) as bare:
        try:
            bare.next()
        except LeaseFailedError as error:
            refused = {"code": error.code, "message": str(error)}
    report({"scenario": "https", "ids": ids, "withoutCertificate": refused})


def close_returns(urls: List[str], sequence: str, token: str, take: int, then: int) -> None:
    """A client with the sequence's token takes a few IDs and is closed, which gives the rest of its blocks
    back; a second client then takes more and is closed too. Each ID with the client's own decoding (the
    block's ordered ID), and what each close() reported."""

    def take_and_close(count: int) -> Tuple[List[str], List[str], List[Dict[str, Any]]]:
        events: List[Dict[str, Any]] = []
        client = TicketClient(urls, sequence, token=token, on_event=events.append)
        ids = client.next_batch(count)
        codec = client.codec()
        client.close()
        # IDs as decimal strings, as the other clients print them.
        shown = [{**e, "first": str(e["first"]), "last": str(e["last"])} for e in events]
        return [str(i) for i in ids], [str(codec.decode(i)) for i in ids], shown

    taken, taken_ordered, returns = take_and_close(take)
    after, after_ordered, after_returns = take_and_close(then)
    report(
        {
            "scenario": "close-returns",
            "taken": taken,
            "takenOrdered": taken_ordered,
            "returns": returns,
            "after": after,
            "afterOrdered": after_ordered,
            "afterReturns": after_returns,
        }
    )


def main(argv: List[str]) -> None:
    command, rest = argv[0], argv[1:]
    urls = rest[0].split(",")
    if command == "hand-out":
        hand_out(urls, rest[1], int(rest[2]), float(rest[3]), rest[4], float(rest[5]) if len(rest) > 5 else 0.0)
    elif command == "opaque":
        opaque(urls, rest[1], rest[2], int(rest[3]))
    elif command == "strict":
        strict(urls, rest[1], int(rest[2]), int(rest[3]))
    elif command == "retired":
        retired(urls, rest[1], int(rest[2]))
    elif command == "https":
        https(urls, rest[1], rest[2], rest[3], rest[4])
    elif command == "close-returns":
        close_returns(urls, rest[1], rest[2], int(rest[3]), int(rest[4]))
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv[1:])
