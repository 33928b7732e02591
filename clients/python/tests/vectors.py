"""The shared test vectors (clients/vectors/), generated from the TypeScript client."""
from __future__ import annotations

import json
import os
from typing import Any, Dict

VECTORS_DIR = os.environ.get("TICKETD_VECTORS_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "vectors"))


def load(name: str) -> Dict[str, Any]:
    with open(os.path.join(VECTORS_DIR, name), encoding="utf-8") as f:
        return json.load(f)  # type: ignore[no-any-return]
