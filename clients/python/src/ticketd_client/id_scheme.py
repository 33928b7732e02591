"""What ticketd and its clients agree on about opaque IDs: the schemes, by the name stored with each key."""
from __future__ import annotations

from typing import Dict, NamedTuple

from .errors import OpaqueIdError


class Scheme(NamedTuple):
    rounds: int
    # Written into every AES block, so the round functions of two schemes never coincide.
    tag: int


#: A sequence's scheme never changes (its IDs would map to others); new ones only come for new sequences.
PERMUTATION_SCHEMES: Dict[str, Scheme] = {
    # ticketd 0.4: 8 Feistel rounds (FF3-1's count). Kept, exactly, for the sequences made with it.
    "feistel-aes256-v1": Scheme(rounds=8, tag=0),
    # From ticketd 0.5: 10 rounds, FF1's count.
    "feistel-aes256-v2": Scheme(rounds=10, tag=2),
}
#: The scheme of sequences created from now on.
PERMUTATION_SCHEME = "feistel-aes256-v2"
#: The scheme of ticketd 0.4's sequences, whose key ``GET .../id-key`` sends as ``key`` (later ones: ``schemeKey``).
FIRST_PERMUTATION_SCHEME = "feistel-aes256-v1"
#: Bytes of a sequence key.
KEY_BYTES = 32


def is_permutation_scheme(name: object) -> bool:
    """True for a scheme this client knows."""
    return isinstance(name, str) and name in PERMUTATION_SCHEMES


def permutation_scheme(name: object) -> Scheme:
    """The scheme of that name; raises OpaqueIdError for one this client does not know."""
    if isinstance(name, str) and name in PERMUTATION_SCHEMES:
        return PERMUTATION_SCHEMES[name]
    known = ", ".join(PERMUTATION_SCHEMES)
    raise OpaqueIdError(
        f"opaque ID scheme {name!r} is unknown to this version (it knows {known}); upgrade ticketd-client"
    )
