"""A process that mints Snowflake IDs with ticketd_client.Snowflake, for the conformance scenarios
that pause, kill and step the clock of real processes (clients/conformance.md).

    python3 snowflake_holder.py <dir> <name> <pool> <url>[,<url>...] [ids_per_tick] [sync|next] [lease_wait_ms]

``sync`` (the default) mints with next_nowait() after ready(); ``next`` with next(), which waits for
a lease by itself (up to lease_wait_ms), writing each ID as it comes.

The same contract as test/support/snowflake-holder.mjs, so the same jest helpers judge both: every
lease gets a file <dir>/<name>.<workerId>.<epoch>.ids of 8-byte little-endian IDs, written after each
batch; events go to stdout as JSON lines (camelCase, as the Node holder prints them). SIGTERM closes
the generator (releasing the lease) and exits.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from typing import Any, Dict, List, Optional

from ticketd_client import Snowflake

_CAMEL = {
    "worker_id": "workerId",
    "expires_in_ms": "expiresInMs",
    "high_water_ms": "highWaterMs",
    "skew_ms": "skewMs",
    "limit_ms": "limitMs",
    "behind_ms": "behindMs",
    "last_used_ms": "lastUsedMs",
    "left_ms": "leftMs",
}


def main(argv: List[str]) -> None:
    directory, name, pool, urls = argv[:4]
    per_tick = int(argv[4]) if len(argv) > 4 else 200
    mode = argv[5] if len(argv) > 5 else "sync"
    # In sync mode ready() tries once (no wait) unless told otherwise: SIGTERM is never held up by a wait.
    waits: Dict[str, Any] = (
        {"lease_wait_ms": float(argv[6])} if len(argv) > 6 else ({"lease_wait_ms": 0.0} if mode == "sync" else {})
    )
    lock = threading.Lock()
    files: Dict[str, Any] = {"current": None}

    def say(event: Dict[str, Any]) -> None:
        line = {"name": name, "at": time.time_ns() // 1_000_000, **{_CAMEL.get(k, k): v for k, v in event.items()}}
        with lock:
            sys.stdout.write(json.dumps(line) + "\n")
            sys.stdout.flush()

    def on_event(event: Dict[str, Any]) -> None:
        if event["type"] == "leased":
            with lock:
                if files["current"] is not None:
                    files["current"].close()
                path = os.path.join(directory, f"{name}.{event['worker_id']}.{event['epoch']}.ids")
                files["current"] = open(path, "ab")
        say(event)

    def write(target: Any, batch: bytearray) -> None:
        if batch and target is not None:
            with lock:
                target.write(batch)
                target.flush()

    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    generator = Snowflake(urls.split(","), pool, holder=name, on_event=on_event, **waits)
    while not stopping.is_set():
        batch = bytearray()
        failed: Optional[BaseException] = None
        with lock:
            target = files["current"]
        try:
            if mode == "next":
                # Each ID is written as it comes, to the file of the lease it came from.
                for _ in range(per_tick):
                    id_ = generator.next()
                    with lock:
                        files["current"].write(id_.to_bytes(8, "little"))
                        files["current"].flush()
                stopping.wait(0.01)
                continue
            if generator.worker_id is None:
                generator.ready()
                with lock:
                    target = files["current"]
            for _ in range(per_tick):
                id_ = generator.next_nowait()
                # The "leased" event is emitted under the generator's lock, before any ID of the
                # new lease: an ID minted after a change of lease goes to the new lease's file.
                if files["current"] is not target:
                    write(target, batch)
                    batch = bytearray()
                    target = files["current"]
                batch += id_.to_bytes(8, "little")
        except Exception as error:  # noqa: BLE001 - reported, and tried again
            failed = error
            cause = error.__cause__
            say(
                {
                    "type": "error",
                    "code": getattr(error, "code", "unknown"),
                    "message": str(error),
                    "causeCodes": list(getattr(cause, "codes", ())),
                }
            )
        write(target, batch)
        stopping.wait(0.1 if failed is not None else 0.01)
    generator.close()
    say({"type": "closed"})


if __name__ == "__main__":
    main(sys.argv[1:])
