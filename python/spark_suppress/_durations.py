"""Durations cross to the JVM as integer milliseconds; users may give ``timedelta`` or ``int`` milliseconds."""

from __future__ import annotations

from datetime import timedelta
from typing import Union

Duration = Union[timedelta, int]

#: Kafka's "forever" (``Long.MAX_VALUE`` milliseconds).
FOREVER_MS = 2**63 - 1


def to_millis(value: Duration, parameter: str, *, allow_zero: bool = True) -> int:
    """Validate ``value`` and return it in whole milliseconds, naming ``parameter`` in any error."""
    if isinstance(value, bool) or not isinstance(value, (timedelta, int)):
        raise TypeError(
            f"{parameter} must be a datetime.timedelta or an int number of milliseconds, got {value!r}"
        )
    if isinstance(value, timedelta):
        ms = (value.days * 86_400 + value.seconds) * 1000 + value.microseconds // 1000
    else:
        ms = value
    if ms < 0 or (ms == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{parameter} must be {bound}, got {value!r}; pass a {'non-negative' if allow_zero else 'positive'} duration")
    return min(ms, FOREVER_MS)
