"""Suppression configuration, mirroring Kafka's ``Suppressed`` and ``BufferConfig`` (immutable; ``with_*`` copy).

Python checks the types of the arguments; their values are checked on the JVM when the operator is built, where
every rule lives once, and a bad value raises ``pyspark.errors.IllegalArgumentException`` in Python's spelling.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Dict, Optional

from ._durations import Duration, to_millis

_UNBOUNDED = None


def _bound(value: int, parameter: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{parameter} must be an int, got {value!r}")
    return value


# Fields that cross to the JVM as wire strings are private and keyword-only: configs come from the factories.
@dataclass(frozen=True, kw_only=True)
class BufferConfig:
    """How much a suppression may buffer and what it does when full. Bounds hold per state partition."""

    max_records_bound: Optional[int] = _UNBOUNDED
    max_bytes_bound: Optional[int] = _UNBOUNDED
    _when_full: str = "unbounded"  # unbounded | emitEarly | shutDown | spillToDisk
    size_model: str = "kafka"  # kafka | value_bytes

    # -- factories ---------------------------------------------------------------------------------------------
    @staticmethod
    def unbounded() -> "StrictBufferConfig":
        """No bound: every record stays until its time comes."""
        return StrictBufferConfig()

    @staticmethod
    def max_records(record_limit: int) -> "EagerBufferConfig":
        """At most ``record_limit`` keys; emits the oldest early when full."""
        return EagerBufferConfig(max_records_bound=_bound(record_limit, "max_records"), _when_full="emitEarly")

    @staticmethod
    def max_bytes(byte_limit: int) -> "EagerBufferConfig":
        """At most ``byte_limit`` bytes (see the README's size formula); emits the oldest early when full."""
        return EagerBufferConfig(max_bytes_bound=_bound(byte_limit, "max_bytes"), _when_full="emitEarly")

    # -- copies --------------------------------------------------------------------------------------------------
    def with_max_records(self, record_limit: int) -> "BufferConfig":
        return replace(self, max_records_bound=_bound(record_limit, "max_records"), _when_full=self._bounded_strategy())

    def with_max_bytes(self, byte_limit: int) -> "BufferConfig":
        return replace(self, max_bytes_bound=_bound(byte_limit, "max_bytes"), _when_full=self._bounded_strategy())

    def with_no_bound(self) -> "StrictBufferConfig":
        return StrictBufferConfig(size_model=self.size_model)

    def _copy(self, cls: type, when_full: str) -> "BufferConfig":
        return cls(max_records_bound=self.max_records_bound, max_bytes_bound=self.max_bytes_bound,
                   _when_full=when_full, size_model=self.size_model)

    def emit_early_when_full(self) -> "EagerBufferConfig":
        return self._copy(EagerBufferConfig, "emitEarly")

    def shut_down_when_full(self) -> "StrictBufferConfig":
        return self._copy(StrictBufferConfig, "shutDown")

    def spill_to_disk(self) -> "StrictBufferConfig":
        """Keep the buffer in the RocksDB state store; never emit early (the session must use that provider)."""
        return self._copy(StrictBufferConfig, "spillToDisk")

    def with_size_model(self, model: str) -> "BufferConfig":
        """Count entry sizes as Kafka estimates them (``"kafka"``, the default) or by value bytes only
        (``"value_bytes"``, the KIP-328 tables' model)."""
        if not isinstance(model, str):
            raise TypeError(f"model must be a string ('kafka' or 'value_bytes'), got {model!r}")
        return replace(self, size_model=model)

    # -- internals ------------------------------------------------------------------------------------------------
    def _bounded_strategy(self) -> str:
        return "shutDown" if self._when_full == "unbounded" else self._when_full

    @property
    def when_full(self) -> str:
        """What happens when a bound is exceeded: ``unbounded``, ``emitEarly``, ``shutDown`` or ``spillToDisk``."""
        return self._when_full

    @property
    def is_strict(self) -> bool:
        return self._when_full != "emitEarly"

    def _to_json(self) -> Dict[str, Any]:
        return {
            "maxRecords": self.max_records_bound,
            "maxBytes": self.max_bytes_bound,
            "whenFull": self._when_full,
            "sizeModel": self.size_model,
        }

    def __repr__(self) -> str:
        parts = []
        if self.max_records_bound is not None:
            parts.append(f"max_records={self.max_records_bound}")
        if self.max_bytes_bound is not None:
            parts.append(f"max_bytes={self.max_bytes_bound}")
        parts.append(self._when_full)
        return f"{type(self).__name__}({', '.join(parts)})"


@dataclass(frozen=True, repr=False, kw_only=True)
class EagerBufferConfig(BufferConfig):
    """A buffer config that may emit the oldest records early when full."""

    def with_max_records(self, record_limit: int) -> "EagerBufferConfig":
        return replace(self, max_records_bound=_bound(record_limit, "max_records"))

    def with_max_bytes(self, byte_limit: int) -> "EagerBufferConfig":
        return replace(self, max_bytes_bound=_bound(byte_limit, "max_bytes"))


@dataclass(frozen=True, repr=False, kw_only=True)
class StrictBufferConfig(BufferConfig):
    """A buffer config that never emits early: unbounded, shut down when full, or spilled to disk."""

    def with_max_records(self, record_limit: int) -> "StrictBufferConfig":
        return replace(self, max_records_bound=_bound(record_limit, "max_records"), _when_full=self._bounded_strategy())

    def with_max_bytes(self, byte_limit: int) -> "StrictBufferConfig":
        return replace(self, max_bytes_bound=_bound(byte_limit, "max_bytes"), _when_full=self._bounded_strategy())


def check_name(name: Optional[str]) -> Optional[str]:
    """``name`` if it is a string or None; whether it is a usable name is the JVM's to say."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a string, got {name!r}")
    return name


@dataclass(frozen=True, kw_only=True)
class Suppressed:
    """What a suppression holds back and for how long. Build with ``until_time_limit`` or ``until_window_closes``."""

    _mode: str
    buffer_config: BufferConfig
    time_limit_ms: Optional[int] = None
    _buffer_time: str = "first"
    _clock: str = "event"
    name: Optional[str] = None

    @staticmethod
    def until_time_limit(
        time_to_wait_for_more_events: Duration, buffer_config: BufferConfig, clock: str = "event"
    ) -> "Suppressed":
        """Rate limiting: a key's latest update leaves once its buffer time is this far behind stream time.

        ``clock="processing"`` measures the limit in wall-clock time of the micro-batches instead of event time
        (Kafka never shipped this): not deterministic, not replayable.
        """
        ms = to_millis(time_to_wait_for_more_events, "time_to_wait_for_more_events")
        if not isinstance(buffer_config, BufferConfig):
            raise TypeError(f"buffer_config must be a BufferConfig, got {buffer_config!r}")
        if not isinstance(clock, str):
            raise TypeError(f"clock must be a string ('event' or 'processing'), got {clock!r}")
        return Suppressed(_mode="untilTimeLimit", buffer_config=buffer_config, time_limit_ms=ms, _clock=clock)

    @staticmethod
    def until_window_closes(buffer_config: "StrictBufferConfig") -> "Suppressed":
        """Final results: one row per key and window, once ``window end + grace <= stream time``."""
        if not isinstance(buffer_config, BufferConfig):
            raise TypeError(f"buffer_config must be a BufferConfig, got {buffer_config!r}")
        return Suppressed(_mode="untilWindowCloses", buffer_config=buffer_config)

    def with_name(self, name: str) -> "Suppressed":
        """Name the operator: used in errors and metrics, and checked against the state in the checkpoint."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a string, got {name!r}")
        return replace(self, name=name)

    def with_timer_reset(self) -> "Suppressed":
        """Debounce: an update moves the key's buffer time to its own timestamp (until_time_limit only)."""
        return replace(self, _buffer_time="latest")

    @property
    def mode(self) -> str:
        """``untilTimeLimit`` or ``untilWindowCloses``."""
        return self._mode

    def _to_json(self) -> Dict[str, Any]:
        return {
            "mode": self._mode,
            "timeLimitMs": self.time_limit_ms,
            "bufferTime": self._buffer_time,
            "clock": self._clock,
            "name": self.name,
            "buffer": self.buffer_config._to_json(),
        }
