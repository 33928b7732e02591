"""ticketd-client for Python: lease blocks of unique 64-bit IDs from ticketd and hand them out
in-process; Snowflake IDs on a leased worker ID; strict sequences. Standard library only."""
from .errors import (
    ClockMovedBackError,
    ClockSkewError,
    LeaseFailedError,
    NoBufferedIdsError,
    NoLeaseError,
    OpaqueIdError,
    SnowflakeLayoutError,
    StrictSequenceError,
    TicketClientError,
)
from .id_codec import IdCodec, fetch_id_codec
from .id_permutation import IdPermutation
from .id_scheme import (
    FIRST_PERMUTATION_SCHEME,
    KEY_BYTES,
    PERMUTATION_SCHEME,
    PERMUTATION_SCHEMES,
    is_permutation_scheme,
    permutation_scheme,
)
from .snowflake import DEFAULT_MAX_STEP_BACK_MS, Snowflake, SystemClock
from .snowflake_layout import (
    DEFAULT_LAYOUT,
    DEFAULT_SNOWFLAKE_EPOCH_MS,
    SnowflakeLayout,
    SnowflakeParts,
    complete_layout,
    compose,
    decompose,
)
from .ticket_client import TicketClient

__version__ = "0.13.0"

__all__ = [
    "ClockMovedBackError",
    "ClockSkewError",
    "DEFAULT_LAYOUT",
    "DEFAULT_MAX_STEP_BACK_MS",
    "DEFAULT_SNOWFLAKE_EPOCH_MS",
    "FIRST_PERMUTATION_SCHEME",
    "IdCodec",
    "IdPermutation",
    "KEY_BYTES",
    "LeaseFailedError",
    "NoBufferedIdsError",
    "NoLeaseError",
    "OpaqueIdError",
    "PERMUTATION_SCHEME",
    "PERMUTATION_SCHEMES",
    "Snowflake",
    "SnowflakeLayout",
    "SnowflakeLayoutError",
    "SnowflakeParts",
    "StrictSequenceError",
    "SystemClock",
    "TicketClient",
    "TicketClientError",
    "compose",
    "complete_layout",
    "decompose",
    "fetch_id_codec",
    "is_permutation_scheme",
    "permutation_scheme",
]
