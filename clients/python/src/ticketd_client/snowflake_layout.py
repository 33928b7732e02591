"""The bit layout of Snowflake IDs: time since an epoch, worker ID, sequence within a millisecond."""
from __future__ import annotations

import datetime
from typing import Mapping, NamedTuple, Optional, Union

from .errors import SnowflakeLayoutError


class SnowflakeLayout(NamedTuple):
    """Widths in bits, most significant first; at most 63 in all, so IDs stay positive as signed 64-bit."""

    time_bits: int = 41
    worker_bits: int = 10
    sequence_bits: int = 12


class SnowflakeParts(NamedTuple):
    """An ID taken apart."""

    timestamp_ms: int
    worker_id: int
    sequence: int


#: Twitter's layout: 41 bits of milliseconds (69 years), 10 of worker ID, 12 of sequence (4,096 IDs per ms).
DEFAULT_LAYOUT = SnowflakeLayout()
#: Default epoch: 2024-01-01T00:00:00Z.
DEFAULT_SNOWFLAKE_EPOCH_MS = 1704067200000


def _iso(ms: int) -> str:
    try:
        moment = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(milliseconds=ms)
    except OverflowError:
        # Beyond year 9999 (a 48-bit layout's end): the number says it as well.
        return f"{ms} ms since 1970"
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def complete_layout(given: Optional[Union[SnowflakeLayout, Mapping[str, int]]] = None) -> SnowflakeLayout:
    """The layout given (a SnowflakeLayout or a mapping of some of its widths), completed with the default's
    widths and checked."""
    if given is None:
        given = {}
    fields = given._asdict() if isinstance(given, SnowflakeLayout) else dict(given)
    unknown = set(fields) - set(SnowflakeLayout._fields)
    if unknown:
        raise SnowflakeLayoutError(
            f"layout has no {', '.join(sorted(unknown))}; it has {', '.join(SnowflakeLayout._fields)}"
        )
    merged = {**DEFAULT_LAYOUT._asdict(), **fields}
    for key, value in merged.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise SnowflakeLayoutError(f"layout.{key} must be a positive integer; got {value!r}")
    layout = SnowflakeLayout(**merged)
    total = layout.time_bits + layout.worker_bits + layout.sequence_bits
    if total > 63:
        raise SnowflakeLayoutError(
            f"layout adds up to {total} bits; at most 63 (time_bits {layout.time_bits} + "
            f"worker_bits {layout.worker_bits} + sequence_bits {layout.sequence_bits})"
        )
    if layout.time_bits > 48:
        raise SnowflakeLayoutError(
            f"layout.time_bits is at most 48 (8,900 years of milliseconds); got {layout.time_bits}"
        )
    return layout


def decompose(
    id_: int, layout: SnowflakeLayout = DEFAULT_LAYOUT, epoch_ms: int = DEFAULT_SNOWFLAKE_EPOCH_MS
) -> SnowflakeParts:
    """Takes an ID apart by the layout and epoch."""
    seq_bits = layout.sequence_bits
    return SnowflakeParts(
        timestamp_ms=(id_ >> (seq_bits + layout.worker_bits)) + epoch_ms,
        worker_id=(id_ >> seq_bits) & ((1 << layout.worker_bits) - 1),
        sequence=id_ & ((1 << seq_bits) - 1),
    )


def first_id_of(
    ms: int, worker_id: int, layout: SnowflakeLayout = DEFAULT_LAYOUT, epoch_ms: int = DEFAULT_SNOWFLAKE_EPOCH_MS
) -> int:
    """The first ID of a millisecond for a worker."""
    since = ms - epoch_ms
    if since < 0 or since >= 1 << layout.time_bits:
        raise SnowflakeLayoutError(
            f"time {_iso(ms)} does not fit {layout.time_bits} bits of milliseconds since the epoch {_iso(epoch_ms)}"
        )
    return (since << (layout.worker_bits + layout.sequence_bits)) | (worker_id << layout.sequence_bits)


def compose(
    timestamp_ms: int,
    worker_id: int,
    sequence: int,
    layout: SnowflakeLayout = DEFAULT_LAYOUT,
    epoch_ms: int = DEFAULT_SNOWFLAKE_EPOCH_MS,
) -> int:
    """The ID of (timestamp, worker ID, sequence): the inverse of decompose."""
    return first_id_of(timestamp_ms, worker_id, layout, epoch_ms) | sequence
