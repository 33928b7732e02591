"""The Python client's throughput against a running ticketd, for bench/python-client.ts.

    python3 measure.py <url> <admin-token> <sequence>[:<blocks label>[:<client token>]] ...

Prints one JSON line: {"python": version, "results": [{"name", "idsPerSecond"}...], "checked": n}.
Each figure is the best of three runs of 0.3 s, calling in chunks of 1,000 (as bench/in-process.ts
does for the Node SDK). Every ID measured is kept and checked: a repeat fails the run.
"""
from __future__ import annotations

import itertools
import json
import platform
import sys
import threading
import time
import urllib.request
from typing import Callable, Dict, List

from ticketd_client import Snowflake, TicketClient
from ticketd_client.aes256 import Aes256
from ticketd_client.errors import NoBufferedIdsError
from ticketd_client.id_permutation import IdPermutation

RUN_S = 0.3
ROUNDS = 3
checked = 0


def time_chunks(name: str, chunk: Callable[[], List[int]], unique: bool = True) -> Dict[str, object]:
    """Best IDs/s over ROUNDS runs of RUN_S, calling ``chunk`` (1,000 IDs) repeatedly."""
    global checked
    best = 0.0
    for _ in range(ROUNDS):
        n = 0
        ids: List[int] = []
        start = time.perf_counter()
        end = start + RUN_S
        now = start
        while now < end:
            ids.extend(chunk())
            n += 1000
            now = time.perf_counter()
        best = max(best, n / (now - start))
        if unique:
            if len(set(ids)) != len(ids):
                raise SystemExit(f"{name}: {len(ids) - len(set(ids))} repeated IDs")
            checked += len(ids)
    return {"name": name, "idsPerSecond": round(best)}


def baseline() -> Dict[str, object]:
    """The in-process baseline, no client: next(itertools.count()) under a lock, as a thread-safe counter costs."""
    counter = itertools.count(1)
    lock = threading.Lock()

    def counted() -> List[int]:
        out = []
        for _ in range(1000):
            with lock:
                out.append(next(counter))
        return out

    return time_chunks("Python next(itertools.count()) under a lock (in-process baseline, no client)", counted)


def put_pool(url: str, admin: str, pool: str, worker_bits: int) -> None:
    request = urllib.request.Request(
        f"{url}/v1/worker-pools/{pool}",
        data=json.dumps({"workerBits": worker_bits}).encode(),
        method="PUT",
        headers={"authorization": f"Bearer {admin}", "content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as res:
        if res.status not in (200, 201):
            raise SystemExit(f"PUT pool {pool}: {res.status}")


def ticket_client(url: str, sequence: str, blocks: str, token: str) -> List[Dict[str, object]]:
    client = TicketClient([url], sequence, token=token or None)
    client.next()
    kind = "opaque IDs, " if client.codec().ids == "opaque" else ""
    nxt = client.next
    nowait = client.next_nowait

    def by_next() -> List[int]:
        return [nxt() for _ in range(1000)]

    def by_nowait() -> List[int]:
        out = []
        for _ in range(1000):
            try:
                out.append(nowait())
            except NoBufferedIdsError:
                out.append(nxt())
        return out

    results = [
        time_chunks(f"Python TicketClient.next() ({kind}leases blocks of {blocks})", by_next),
        time_chunks(f"Python TicketClient.next_nowait() ({kind}leases blocks of {blocks})", by_nowait),
    ]
    client.close()
    return results


def snowflakes(url: str, admin: str) -> List[Dict[str, object]]:
    put_pool(url, admin, "bench_py_default", 10)
    put_pool(url, admin, "bench_py_wide", 6)
    standard = Snowflake([url], "bench_py_default")
    wide = Snowflake([url], "bench_py_wide", layout={"time_bits": 41, "worker_bits": 6, "sequence_bits": 16})
    standard.ready()
    wide.ready()
    results = []
    for label, generator in (("layout 41/10/12: at most 4,096 IDs per ms", standard), ("layout 41/6/16", wide)):
        nowait = generator.next_nowait
        nxt = generator.next
        name = f"Python Snowflake.next_nowait() ({label})"
        results.append(time_chunks(name, lambda: [nowait() for _ in range(1000)]))
        results.append(time_chunks(f"Python Snowflake.next() ({label})", lambda: [nxt() for _ in range(1000)]))
    standard.close()
    wide.close()
    return results


def primitives() -> List[Dict[str, object]]:
    """What the opaque IDs cost underneath: AES-256 blocks, and P over a 63-bit domain, in pure Python."""
    aes = Aes256(bytes(range(32)))
    block = bytes(16)
    p = IdPermutation(bytes(range(32)), 0, (1 << 63) - 1, "feistel-aes256-v2")
    counter = [1]

    def encodes() -> List[int]:
        first = counter[0]
        counter[0] += 1000
        return p.encode_run(first, 1000)

    return [
        time_chunks(
            "Python AES-256 of one block (table-based, pure Python)",
            lambda: [len(aes.encrypt_block(block)) for _ in range(1000)],
            unique=False,
        ),
        time_chunks("Python IdPermutation.encode (63-bit domain, feistel-aes256-v2)", encodes),
    ]


def main(argv: List[str]) -> None:
    url, admin = argv[0], argv[1]
    results: List[Dict[str, object]] = [baseline()]
    for spec in argv[2:]:
        sequence, blocks, token = (spec.split(":") + ["", ""])[:3]
        results.extend(ticket_client(url, sequence, blocks or "?", token))
    results.extend(snowflakes(url, admin))
    results.extend(primitives())
    python = f"{platform.python_implementation()} {platform.python_version()}"
    print(json.dumps({"python": python, "results": results, "checked": checked}))


if __name__ == "__main__":
    main(sys.argv[1:])
