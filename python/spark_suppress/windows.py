"""Windows and emit strategies of a windowed aggregation, mirroring Kafka's ``TimeWindows``, ``SlidingWindows``,
``SessionWindows`` and ``EmitStrategy`` (immutable). Python checks argument types; values are checked on the JVM
when the aggregation is built, where every rule lives once."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Dict

from ._durations import Duration, to_millis


@dataclass(frozen=True)
class TimeWindows:
    """Tumbling (the default) or hopping windows ``[start, start + size)``, starting at multiples of the advance
    from the epoch. A window takes records until ``end + grace <= stream time``."""

    size_ms: int
    advance_ms: int
    grace_ms: int

    @staticmethod
    def of_size_and_grace(size: Duration, grace: Duration) -> "TimeWindows":
        """Tumbling windows of ``size``, taking late records until ``grace`` after their end."""
        size_ms = to_millis(size, "TimeWindows size")
        return TimeWindows(size_ms, size_ms, to_millis(grace, "TimeWindows grace"))

    @staticmethod
    def of_size_with_no_grace(size: Duration) -> "TimeWindows":
        """Tumbling windows of ``size`` without grace: a window closes at its end."""
        return TimeWindows.of_size_and_grace(size, 0)

    def advance_by(self, advance: Duration) -> "TimeWindows":
        """Hopping windows: a new window every ``advance`` (``0 < advance <= size``)."""
        return replace(self, advance_ms=to_millis(advance, "advance"))

    def _to_json(self) -> Dict[str, Any]:
        return {"type": "time", "sizeMs": self.size_ms, "advanceMs": self.advance_ms, "graceMs": self.grace_ms}


@dataclass(frozen=True)
class SlidingWindows:
    """Kafka's sliding windows: ``[t - time_difference, t]`` (both ends inclusive) ending at every record ``t``, and
    one starting 1 ms after every record that later records follow within the time difference."""

    time_difference_ms: int
    grace_ms: int

    @staticmethod
    def of_time_difference_and_grace(time_difference: Duration, grace: Duration) -> "SlidingWindows":
        return SlidingWindows(
            to_millis(time_difference, "SlidingWindows time_difference"), to_millis(grace, "SlidingWindows grace")
        )

    @staticmethod
    def of_time_difference_with_no_grace(time_difference: Duration) -> "SlidingWindows":
        return SlidingWindows.of_time_difference_and_grace(time_difference, 0)

    def _to_json(self) -> Dict[str, Any]:
        return {"type": "sliding", "timeDifferenceMs": self.time_difference_ms, "graceMs": self.grace_ms}


@dataclass(frozen=True)
class SessionWindows:
    """Session windows: records of a key at most ``inactivity_gap`` apart form one session. A session takes records
    until ``last record + gap + grace < stream time``."""

    inactivity_gap_ms: int
    grace_ms: int

    @staticmethod
    def of_inactivity_gap_and_grace(inactivity_gap: Duration, grace: Duration) -> "SessionWindows":
        return SessionWindows(
            to_millis(inactivity_gap, "SessionWindows inactivity_gap"),
            to_millis(grace, "SessionWindows grace"),
        )

    @staticmethod
    def of_inactivity_gap_with_no_grace(inactivity_gap: Duration) -> "SessionWindows":
        return SessionWindows.of_inactivity_gap_and_grace(inactivity_gap, 0)

    def _to_json(self) -> Dict[str, Any]:
        return {"type": "session", "gapMs": self.inactivity_gap_ms, "graceMs": self.grace_ms}


@dataclass(frozen=True, kw_only=True)
class EmitStrategy:
    """When a windowed aggregation emits (Kafka's ``EmitStrategy``, KIP-825), chosen per operator."""

    _mode: str

    @staticmethod
    def on_window_close() -> "EmitStrategy":
        """One final row per key and window, when the window closes."""
        return EmitStrategy(_mode="onWindowClose")

    @staticmethod
    def on_window_update() -> "EmitStrategy":
        """A row for every change of a window (Kafka's default); sessions also retract merged sessions."""
        return EmitStrategy(_mode="onWindowUpdate")
