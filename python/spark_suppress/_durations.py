"""Durations cross to the JVM as integer milliseconds; users may give ``timedelta`` or ``int`` milliseconds."""

from __future__ import annotations

from datetime import timedelta
from typing import Union

Duration = Union[timedelta, int]

#: Kafka's "forever" (``Long.MAX_VALUE`` milliseconds).
FOREVER_MS = 2**63 - 1


def to_millis(value: Duration, parameter: str) -> int:
    """``value`` in whole milliseconds, naming ``parameter`` if it is not a duration. Its range (e.g. ``>= 0``) is
    the JVM's to check, where every rule lives once: a negative value crosses as it is and is refused there."""
    if isinstance(value, bool) or not isinstance(value, (timedelta, int)):
        raise TypeError(f"{parameter} must be a datetime.timedelta or an int number of milliseconds, got {value!r}")
    if isinstance(value, timedelta):
        ms = (value.days * 86_400 + value.seconds) * 1000 + value.microseconds // 1000
    else:
        ms = value
    return max(min(ms, FOREVER_MS), -FOREVER_MS)
