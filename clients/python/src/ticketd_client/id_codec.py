"""A sequence's codec as the client sees it: the identity for an ordered sequence, or the sequence's
permutation (under the scheme stored with its key) for an opaque one."""
from __future__ import annotations

import base64
from typing import Optional, Sequence
from urllib.parse import quote

from ._http import Attempt, Transport, ask_in_turn
from .id_permutation import IdPermutation
from .id_scheme import FIRST_PERMUTATION_SCHEME, is_permutation_scheme


class IdCodec:
    """An ordered sequence's codec: the identity. ``ids`` is ``"ordered"`` or ``"opaque"``."""

    ids = "ordered"
    permutation: Optional[IdPermutation] = None

    def encode(self, ordered: int) -> int:
        """The ID ticketd serves for an ordered one."""
        return ordered

    def decode(self, id_: int) -> int:
        """The ordered ID behind one ticketd served."""
        return id_


class OpaqueCodec(IdCodec):
    """An opaque sequence's codec: its keyed permutation."""

    ids = "opaque"

    def __init__(self, permutation: IdPermutation) -> None:
        self.permutation = permutation

    def encode(self, ordered: int) -> int:
        return self.permutation.encode(ordered)  # type: ignore[union-attr]

    def decode(self, id_: int) -> int:
        return self.permutation.decode(id_)  # type: ignore[union-attr]


ORDERED = IdCodec()


def decode_key(text: str) -> bytes:
    """A key as ticketd sends it: base64url without padding."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def fetch_id_codec(urls: Sequence[str], sequence: str, transport: Transport) -> IdCodec:
    """Fetches the codec of a sequence from one of ``urls`` (an opaque one's key needs its own client token)."""

    def ask(url: str) -> Attempt:
        base = f"{url}/v1/sequences/{quote(sequence, safe='')}"
        settings = transport.get_json("GET", base)
        if not settings.ok:
            return settings
        ids = settings.value.get("ids")
        if ids == "ordered":
            return Attempt(ok=True, value=ORDERED)
        # Guessing "ordered" for a mode it does not know would hand out IDs another client may hold.
        if ids != "opaque":
            error = f"sequence {sequence} has ids {ids!r}, unknown to this version; upgrade ticketd-client"
            return Attempt(ok=False, error=error, final=True)
        key = transport.get_json(
            "GET", f"{base}/id-key", lambda b: all(k in b for k in ("scheme", "startAfter", "maxId"))
        )
        if not key.ok:
            return key
        scheme = key.value["scheme"]
        if not is_permutation_scheme(scheme):
            error = (
                f"sequence {sequence} uses opaque ID scheme {scheme!r}, unknown to this version; upgrade ticketd-client"
            )
            return Attempt(ok=False, error=error, final=True)
        encoded = key.value.get("key" if scheme == FIRST_PERMUTATION_SCHEME else "schemeKey")
        if not isinstance(encoded, str):
            return Attempt(ok=False, error=f"ticketd sent no key for scheme {scheme}", final=True)
        permutation = IdPermutation(decode_key(encoded), int(key.value["startAfter"]), int(key.value["maxId"]), scheme)
        return Attempt(ok=True, value=OpaqueCodec(permutation))

    codec, _ = ask_in_turn(urls, 0, f"no ticketd gave the codec of {sequence}", ask)
    if not isinstance(codec, IdCodec):  # an Attempt's value is untyped: say what came back
        raise TypeError(f"expected an IdCodec for {sequence}, got {type(codec).__name__}")
    return codec
