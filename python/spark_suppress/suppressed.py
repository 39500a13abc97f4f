"""Suppression configuration, mirroring Kafka's ``Suppressed`` and ``BufferConfig`` (immutable; ``with_*`` copy)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Dict, Optional

from ._durations import Duration, to_millis

_UNBOUNDED = None


def _bound(value: int, parameter: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{parameter} must be an int, got {value!r}")
    if value < 0:
        raise ValueError(f"{parameter} must be >= 0, got {value}; use BufferConfig.unbounded() for no bound")
    return value


@dataclass(frozen=True)
class BufferConfig:
    """How much a suppression may buffer and what it does when full. Bounds hold per state partition."""

    max_records_bound: Optional[int] = _UNBOUNDED
    max_bytes_bound: Optional[int] = _UNBOUNDED
    when_full: str = "unbounded"  # unbounded | emitEarly | shutDown | spillToDisk
    size_model: str = "kafka"  # kafka | value_bytes

    # -- factories ---------------------------------------------------------------------------------------------
    @staticmethod
    def unbounded() -> "StrictBufferConfig":
        """No bound: every record stays until its time comes."""
        return StrictBufferConfig()

    @staticmethod
    def max_records(record_limit: int) -> "EagerBufferConfig":
        """At most ``record_limit`` keys; emits the oldest early when full."""
        return EagerBufferConfig(max_records_bound=_bound(record_limit, "max_records"), when_full="emitEarly")

    @staticmethod
    def max_bytes(byte_limit: int) -> "EagerBufferConfig":
        """At most ``byte_limit`` bytes (see the README's size formula); emits the oldest early when full."""
        return EagerBufferConfig(max_bytes_bound=_bound(byte_limit, "max_bytes"), when_full="emitEarly")

    # -- copies --------------------------------------------------------------------------------------------------
    def with_max_records(self, record_limit: int) -> "BufferConfig":
        return replace(self, max_records_bound=_bound(record_limit, "max_records"), when_full=self._bounded_strategy())

    def with_max_bytes(self, byte_limit: int) -> "BufferConfig":
        return replace(self, max_bytes_bound=_bound(byte_limit, "max_bytes"), when_full=self._bounded_strategy())

    def with_no_bound(self) -> "StrictBufferConfig":
        return StrictBufferConfig(size_model=self.size_model)

    def emit_early_when_full(self) -> "EagerBufferConfig":
        return EagerBufferConfig(self.max_records_bound, self.max_bytes_bound, "emitEarly", self.size_model)

    def shut_down_when_full(self) -> "StrictBufferConfig":
        return StrictBufferConfig(self.max_records_bound, self.max_bytes_bound, "shutDown", self.size_model)

    def spill_to_disk(self) -> "StrictBufferConfig":
        """Keep the buffer in the RocksDB state store; never emit early (the session must use that provider)."""
        return StrictBufferConfig(self.max_records_bound, self.max_bytes_bound, "spillToDisk", self.size_model)

    def with_size_model(self, model: str) -> "BufferConfig":
        """Count entry sizes as Kafka estimates them (``"kafka"``, the default) or by value bytes only
        (``"value_bytes"``, the KIP-328 tables' model)."""
        if model not in ("kafka", "value_bytes"):
            raise ValueError(f"size model must be 'kafka' or 'value_bytes', got {model!r}")
        return replace(self, size_model=model)

    # -- internals ------------------------------------------------------------------------------------------------
    def _bounded_strategy(self) -> str:
        return "shutDown" if self.when_full == "unbounded" else self.when_full

    @property
    def is_strict(self) -> bool:
        return self.when_full != "emitEarly"

    def _to_json(self) -> Dict[str, Any]:
        return {
            "maxRecords": self.max_records_bound,
            "maxBytes": self.max_bytes_bound,
            "whenFull": self.when_full,
            "sizeModel": self.size_model,
        }

    def __repr__(self) -> str:
        parts = []
        if self.max_records_bound is not None:
            parts.append(f"max_records={self.max_records_bound}")
        if self.max_bytes_bound is not None:
            parts.append(f"max_bytes={self.max_bytes_bound}")
        parts.append(self.when_full)
        return f"{type(self).__name__}({', '.join(parts)})"


@dataclass(frozen=True, repr=False)
class EagerBufferConfig(BufferConfig):
    """A buffer config that may emit the oldest records early when full."""

    def with_max_records(self, record_limit: int) -> "EagerBufferConfig":
        return replace(self, max_records_bound=_bound(record_limit, "max_records"))

    def with_max_bytes(self, byte_limit: int) -> "EagerBufferConfig":
        return replace(self, max_bytes_bound=_bound(byte_limit, "max_bytes"))


@dataclass(frozen=True, repr=False)
class StrictBufferConfig(BufferConfig):
    """A buffer config that never emits early: unbounded, shut down when full, or spilled to disk."""

    def with_max_records(self, record_limit: int) -> "StrictBufferConfig":
        return replace(self, max_records_bound=_bound(record_limit, "max_records"), when_full=self._bounded_strategy())

    def with_max_bytes(self, byte_limit: int) -> "StrictBufferConfig":
        return replace(self, max_bytes_bound=_bound(byte_limit, "max_bytes"), when_full=self._bounded_strategy())


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    return name


@dataclass(frozen=True)
class Suppressed:
    """What a suppression holds back and for how long. Build with ``until_time_limit`` or ``until_window_closes``."""

    mode: str
    buffer_config: BufferConfig
    time_limit_ms: Optional[int] = None
    buffer_time: str = "first"
    clock: str = "event"
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
        if clock not in ("event", "processing"):
            raise ValueError(f"clock must be 'event' or 'processing', got {clock!r}")
        return Suppressed("untilTimeLimit", buffer_config, ms, "first", clock)

    @staticmethod
    def until_window_closes(buffer_config: "StrictBufferConfig") -> "Suppressed":
        """Final results: one row per key and window, once ``window end + grace <= stream time``."""
        if not isinstance(buffer_config, BufferConfig):
            raise TypeError(f"buffer_config must be a BufferConfig, got {buffer_config!r}")
        if not buffer_config.is_strict:
            raise TypeError(
                "until_window_closes accepts only strict buffer configs (BufferConfig.unbounded(), or a bound with "
                f".shut_down_when_full() or .spill_to_disk()); got {buffer_config!r}, which may emit early and would "
                "then not be final"
            )
        return Suppressed("untilWindowCloses", buffer_config)

    def with_name(self, name: str) -> "Suppressed":
        """Name the operator: used in errors and metrics, and checked against the state in the checkpoint."""
        return replace(self, name=_check_name(name))

    def with_timer_reset(self) -> "Suppressed":
        """Debounce: an update moves the key's buffer time to its own timestamp (until_time_limit only)."""
        if self.mode != "untilTimeLimit":
            raise ValueError("with_timer_reset applies to until_time_limit only")
        return replace(self, buffer_time="latest")

    def _to_json(self) -> Dict[str, Any]:
        return {
            "mode": self.mode,
            "timeLimitMs": self.time_limit_ms,
            "bufferTime": self.buffer_time,
            "clock": self.clock,
            "name": self.name,
            "buffer": self.buffer_config._to_json(),
        }
