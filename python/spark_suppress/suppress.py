"""Kafka's ``suppress`` (KIP-328) and its configuration, ``Suppressed`` and ``BufferConfig`` (immutable; ``with_*``
methods return copies).

Python checks the types of the arguments; their values are checked on the JVM when the operator is built, where
every rule lives once, and a bad value raises ``pyspark.errors.IllegalArgumentException`` in Python's spelling.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Optional, Tuple, Union

from . import _spec, _transport
from ._columns import Columns, column_list, column_name
from ._durations import Duration, to_millis

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from .proto import spec_pb2

Window = Union[str, Tuple[str, str]]

_UNBOUNDED = None


def _bound(value: int, parameter: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{parameter} must be an int, got {value!r}")
    return value


# Fields that cross to the JVM as wire strings are private and keyword-only: configs come from the factories.
@dataclass(frozen=True, kw_only=True)
class BufferConfig:
    """How much a suppression may buffer and what it does when full (Kafka's ``Suppressed.BufferConfig``).

    Build one with :meth:`unbounded`, :meth:`max_records` or :meth:`max_bytes`; the ``with_*`` and ``*_when_full``
    methods return copies. Bounds hold per state partition (Kafka's: per task).

    Parameters
    ----------
    max_records_bound : int, optional
        At most this many keys buffered; None for no bound.
    max_bytes_bound : int, optional
        At most this many bytes buffered (the entry size: docs/suppress.md, "Buffers, bounds and state");
        None for no bound.
    size_model : str
        How an entry's size is counted: ``"kafka"`` (Kafka's estimate, the default) or ``"value_bytes"``.

    Raises
    ------
    TypeError
        From the factories and ``with_*`` methods, when a bound is not an int.

    Examples
    --------
    >>> import spark_suppress as ss
    >>> ss.BufferConfig.max_records(1000)
    EagerBufferConfig(max_records=1000, emitEarly)
    >>> ss.BufferConfig.max_bytes(1 << 20).shut_down_when_full()
    StrictBufferConfig(max_bytes=1048576, shutDown)
    """

    max_records_bound: Optional[int] = _UNBOUNDED
    max_bytes_bound: Optional[int] = _UNBOUNDED
    _when_full: str = "unbounded"  # unbounded | emitEarly | shutDown | spillToDisk
    size_model: str = "kafka"  # kafka | value_bytes

    # -- factories ---------------------------------------------------------------------------------------------
    @staticmethod
    def unbounded() -> "StrictBufferConfig":
        """No bound: every record stays until its time comes.

        Returns
        -------
        StrictBufferConfig
            An unbounded buffer, which never emits early.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.BufferConfig.unbounded()
        StrictBufferConfig(unbounded)
        """
        return StrictBufferConfig()

    @staticmethod
    def max_records(record_limit: int) -> "EagerBufferConfig":
        """At most ``record_limit`` keys; emits the oldest early when full.

        Parameters
        ----------
        record_limit : int
            The largest number of keys buffered per state partition.

        Returns
        -------
        EagerBufferConfig
            A bounded buffer that emits early when full.

        Raises
        ------
        TypeError
            If ``record_limit`` is not an int.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.BufferConfig.max_records(100)
        EagerBufferConfig(max_records=100, emitEarly)
        """
        return EagerBufferConfig(max_records_bound=_bound(record_limit, "max_records"), _when_full="emitEarly")

    @staticmethod
    def max_bytes(byte_limit: int) -> "EagerBufferConfig":
        """At most ``byte_limit`` bytes (docs/suppress.md gives the entry size); emits the oldest early when full.

        Parameters
        ----------
        byte_limit : int
            The largest number of bytes buffered per state partition.

        Returns
        -------
        EagerBufferConfig
            A bounded buffer that emits early when full.

        Raises
        ------
        TypeError
            If ``byte_limit`` is not an int.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.BufferConfig.max_bytes(4096)
        EagerBufferConfig(max_bytes=4096, emitEarly)
        """
        return EagerBufferConfig(max_bytes_bound=_bound(byte_limit, "max_bytes"), _when_full="emitEarly")

    # -- copies --------------------------------------------------------------------------------------------------
    def with_max_records(self, record_limit: int) -> "BufferConfig":
        """A copy bounded to ``record_limit`` keys; an unbounded buffer becomes one that shuts down when full.

        Parameters
        ----------
        record_limit : int
            The largest number of keys buffered per state partition.

        Returns
        -------
        BufferConfig
            The bounded copy.

        Raises
        ------
        TypeError
            If ``record_limit`` is not an int.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.BufferConfig.unbounded().with_max_records(10)
        StrictBufferConfig(max_records=10, shutDown)
        """
        return replace(self, max_records_bound=_bound(record_limit, "max_records"), _when_full=self._bounded_strategy())

    def with_max_bytes(self, byte_limit: int) -> "BufferConfig":
        """A copy bounded to ``byte_limit`` bytes; an unbounded buffer becomes one that shuts down when full.

        Parameters
        ----------
        byte_limit : int
            The largest number of bytes buffered per state partition.

        Returns
        -------
        BufferConfig
            The bounded copy.

        Raises
        ------
        TypeError
            If ``byte_limit`` is not an int.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.BufferConfig.max_records(10).with_max_bytes(4096)
        EagerBufferConfig(max_records=10, max_bytes=4096, emitEarly)
        """
        return replace(self, max_bytes_bound=_bound(byte_limit, "max_bytes"), _when_full=self._bounded_strategy())

    def with_no_bound(self) -> "StrictBufferConfig":
        """A copy without bounds (its size model kept).

        Returns
        -------
        StrictBufferConfig
            An unbounded buffer.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.BufferConfig.max_records(10).with_no_bound()
        StrictBufferConfig(unbounded)
        """
        return StrictBufferConfig(size_model=self.size_model)

    def _copy(self, cls: type, when_full: str) -> Any:
        return cls(
            max_records_bound=self.max_records_bound,
            max_bytes_bound=self.max_bytes_bound,
            _when_full=when_full,
            size_model=self.size_model,
        )

    def emit_early_when_full(self) -> "EagerBufferConfig":
        """A copy that emits the oldest buffered records early when a bound is exceeded.

        Returns
        -------
        EagerBufferConfig
            The copy (not allowed with ``Suppressed.until_window_closes``, which must stay exact).

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.BufferConfig.unbounded().with_max_records(5).emit_early_when_full()
        EagerBufferConfig(max_records=5, emitEarly)
        """
        result: EagerBufferConfig = self._copy(EagerBufferConfig, "emitEarly")
        return result

    def shut_down_when_full(self) -> "StrictBufferConfig":
        """A copy that stops the query with an error when a bound is exceeded.

        Returns
        -------
        StrictBufferConfig
            The copy.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.BufferConfig.max_records(5).shut_down_when_full()
        StrictBufferConfig(max_records=5, shutDown)
        """
        result: StrictBufferConfig = self._copy(StrictBufferConfig, "shutDown")
        return result

    def spill_to_disk(self) -> "StrictBufferConfig":
        """A copy that keeps the buffer in the RocksDB state store and never emits early.

        Returns
        -------
        StrictBufferConfig
            The copy; the session must use Spark's RocksDB state store provider.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.BufferConfig.unbounded().spill_to_disk()
        StrictBufferConfig(spillToDisk)
        """
        result: StrictBufferConfig = self._copy(StrictBufferConfig, "spillToDisk")
        return result

    def with_size_model(self, model: str) -> "BufferConfig":
        """A copy that counts entry sizes as Kafka estimates them or by value bytes only.

        Parameters
        ----------
        model : str
            ``"kafka"`` (the default) or ``"value_bytes"`` (the KIP-328 tables' model).

        Returns
        -------
        BufferConfig
            The copy.

        Raises
        ------
        TypeError
            If ``model`` is not a string (its value is checked when the operator is built).

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.BufferConfig.max_bytes(4096).with_size_model("value_bytes").size_model
        'value_bytes'
        """
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
        """Whether the buffer never emits early (what ``Suppressed.until_window_closes`` needs)."""
        return self._when_full != "emitEarly"

    def _to_wire(self) -> "spec_pb2.BufferConfig":
        m = _spec.messages()
        return m.BufferConfig(
            max_records=self.max_records_bound,
            max_bytes=self.max_bytes_bound,
            when_full=m.WhenFull.Value(_WHEN_FULL[self._when_full]),
            size_model=_spec.choice(m.SizeModel, self.size_model, "size_model"),
        )

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
    """A buffer config that may emit the oldest records early when full (Kafka's ``EagerBufferConfig``).

    Parameters
    ----------
    max_records_bound, max_bytes_bound, size_model
        As for :class:`BufferConfig`; build it with ``BufferConfig.max_records`` or ``BufferConfig.max_bytes``.

    Examples
    --------
    >>> import spark_suppress as ss
    >>> isinstance(ss.BufferConfig.max_records(10), ss.EagerBufferConfig)
    True
    """

    def with_max_records(self, record_limit: int) -> "EagerBufferConfig":
        """A copy bounded to ``record_limit`` keys, still emitting early when full.

        Parameters
        ----------
        record_limit : int
            The largest number of keys buffered per state partition.

        Returns
        -------
        EagerBufferConfig
            The copy.

        Raises
        ------
        TypeError
            If ``record_limit`` is not an int.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.BufferConfig.max_bytes(4096).with_max_records(10)
        EagerBufferConfig(max_records=10, max_bytes=4096, emitEarly)
        """
        return replace(self, max_records_bound=_bound(record_limit, "max_records"))

    def with_max_bytes(self, byte_limit: int) -> "EagerBufferConfig":
        """A copy bounded to ``byte_limit`` bytes, still emitting early when full.

        Parameters
        ----------
        byte_limit : int
            The largest number of bytes buffered per state partition.

        Returns
        -------
        EagerBufferConfig
            The copy.

        Raises
        ------
        TypeError
            If ``byte_limit`` is not an int.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.BufferConfig.max_records(10).with_max_bytes(100)
        EagerBufferConfig(max_records=10, max_bytes=100, emitEarly)
        """
        return replace(self, max_bytes_bound=_bound(byte_limit, "max_bytes"))


@dataclass(frozen=True, repr=False, kw_only=True)
class StrictBufferConfig(BufferConfig):
    """A buffer config that never emits early: unbounded, shut down when full, or spilled to disk.

    Parameters
    ----------
    max_records_bound, max_bytes_bound, size_model
        As for :class:`BufferConfig`; build it with ``BufferConfig.unbounded()`` or ``.shut_down_when_full()``.

    Examples
    --------
    >>> import spark_suppress as ss
    >>> isinstance(ss.BufferConfig.unbounded(), ss.StrictBufferConfig)
    True
    """

    def with_max_records(self, record_limit: int) -> "StrictBufferConfig":
        """A copy bounded to ``record_limit`` keys, shutting down when full unless it spills to disk.

        Parameters
        ----------
        record_limit : int
            The largest number of keys buffered per state partition.

        Returns
        -------
        StrictBufferConfig
            The copy.

        Raises
        ------
        TypeError
            If ``record_limit`` is not an int.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.BufferConfig.unbounded().with_max_records(10)
        StrictBufferConfig(max_records=10, shutDown)
        """
        return replace(self, max_records_bound=_bound(record_limit, "max_records"), _when_full=self._bounded_strategy())

    def with_max_bytes(self, byte_limit: int) -> "StrictBufferConfig":
        """A copy bounded to ``byte_limit`` bytes, shutting down when full unless it spills to disk.

        Parameters
        ----------
        byte_limit : int
            The largest number of bytes buffered per state partition.

        Returns
        -------
        StrictBufferConfig
            The copy.

        Raises
        ------
        TypeError
            If ``byte_limit`` is not an int.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.BufferConfig.unbounded().with_max_bytes(100)
        StrictBufferConfig(max_bytes=100, shutDown)
        """
        return replace(self, max_bytes_bound=_bound(byte_limit, "max_bytes"), _when_full=self._bounded_strategy())


@dataclass(frozen=True, kw_only=True)
class Suppressed:
    """What a suppression holds back and for how long (Kafka's ``Suppressed``).

    Build one with :meth:`until_time_limit` (rate limiting) or :meth:`until_window_closes` (final results).

    Parameters
    ----------
    buffer_config : BufferConfig
        How much the suppression may buffer.
    time_limit_ms : int, optional
        The time limit of ``until_time_limit``, in milliseconds.
    name : str, optional
        The operator's name (:meth:`with_name`).

    Raises
    ------
    TypeError
        From the factories, when an argument has the wrong type.

    Examples
    --------
    >>> from datetime import timedelta
    >>> import spark_suppress as ss
    >>> s = ss.Suppressed.until_time_limit(timedelta(seconds=30), ss.BufferConfig.unbounded())
    >>> s.mode, s.time_limit_ms
    ('untilTimeLimit', 30000)
    """

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

        Parameters
        ----------
        time_to_wait_for_more_events : datetime.timedelta or int
            The time limit (an int is milliseconds).
        buffer_config : BufferConfig
            How much may be buffered, and what happens when full.
        clock : str
            ``"event"`` (Kafka's) or ``"processing"``: the limit in wall-clock time of the micro-batches (Kafka
            never shipped this; not deterministic, not replayable).

        Returns
        -------
        Suppressed
            The configuration for :func:`spark_suppress.suppress`.

        Raises
        ------
        TypeError
            If an argument has the wrong type.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.Suppressed.until_time_limit(10_000, ss.BufferConfig.max_records(100)).time_limit_ms
        10000
        """
        ms = to_millis(time_to_wait_for_more_events, "time_to_wait_for_more_events")
        if not isinstance(buffer_config, BufferConfig):
            raise TypeError(f"buffer_config must be a BufferConfig, got {buffer_config!r}")
        if not isinstance(clock, str):
            raise TypeError(f"clock must be a string ('event' or 'processing'), got {clock!r}")
        return Suppressed(_mode="untilTimeLimit", buffer_config=buffer_config, time_limit_ms=ms, _clock=clock)

    @staticmethod
    def until_window_closes(buffer_config: "StrictBufferConfig") -> "Suppressed":
        """Final results: one row per key and window, once ``window end + grace <= stream time``.

        Parameters
        ----------
        buffer_config : StrictBufferConfig
            A buffer that never emits early (unbounded, shut down when full, or spilled to disk).

        Returns
        -------
        Suppressed
            The configuration for :func:`spark_suppress.suppress` (which then needs ``window`` and ``grace``).

        Raises
        ------
        TypeError
            If ``buffer_config`` is not a BufferConfig (an eager one is refused when the operator is built).

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.Suppressed.until_window_closes(ss.BufferConfig.unbounded()).mode
        'untilWindowCloses'
        """
        if not isinstance(buffer_config, BufferConfig):
            raise TypeError(f"buffer_config must be a BufferConfig, got {buffer_config!r}")
        return Suppressed(_mode="untilWindowCloses", buffer_config=buffer_config)

    def with_name(self, name: str) -> "Suppressed":
        """A copy with the operator's name, used in errors and metrics and checked against the checkpoint's state.

        Parameters
        ----------
        name : str
            The name (Kafka's ``withName``).

        Returns
        -------
        Suppressed
            The named copy.

        Raises
        ------
        TypeError
            If ``name`` is not a string.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.Suppressed.until_window_closes(ss.BufferConfig.unbounded()).with_name("alerts").name
        'alerts'
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be a string, got {name!r}")
        return replace(self, name=name)

    def with_timer_reset(self) -> "Suppressed":
        """Debounce: a copy where an update moves the key's buffer time to its own timestamp (until_time_limit only).

        Returns
        -------
        Suppressed
            The copy.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> s = ss.Suppressed.until_time_limit(1000, ss.BufferConfig.unbounded()).with_timer_reset()
        >>> s.mode
        'untilTimeLimit'
        """
        return replace(self, _buffer_time="latest")

    @property
    def mode(self) -> str:
        """``untilTimeLimit`` or ``untilWindowCloses``."""
        return self._mode

    def _to_wire(self) -> "spec_pb2.Suppressed":
        m = _spec.messages()
        return m.Suppressed(
            mode=m.SuppressionMode.Value(_MODES[self._mode]),
            time_limit_ms=self.time_limit_ms,
            buffer_time=m.BufferTime.Value(_BUFFER_TIMES[self._buffer_time]),
            clock=_spec.choice(m.Clock, self._clock, "clock"),
            name=self.name,
            buffer=self.buffer_config._to_wire(),
        )


# The configs' private wire strings and the enum values (spec.proto) they cross as.
_MODES = {
    "untilTimeLimit": "SUPPRESSION_MODE_UNTIL_TIME_LIMIT",
    "untilWindowCloses": "SUPPRESSION_MODE_UNTIL_WINDOW_CLOSES",
}
_BUFFER_TIMES = {"first": "BUFFER_TIME_FIRST", "latest": "BUFFER_TIME_LATEST"}
_WHEN_FULL = {
    "unbounded": "WHEN_FULL_UNBOUNDED",
    "emitEarly": "WHEN_FULL_EMIT_EARLY",
    "shutDown": "WHEN_FULL_SHUT_DOWN",
    "spillToDisk": "WHEN_FULL_SPILL_TO_DISK",
}


def _window_wire(window: Optional[Window]) -> "Optional[spec_pb2.WindowColumns]":
    if window is None:
        return None
    m = _spec.messages()
    if isinstance(window, str):
        return m.WindowColumns(struct=window)
    if isinstance(window, tuple) and len(window) == 2 and all(isinstance(w, str) for w in window):
        return m.WindowColumns(start_end=m.StartEnd(start=window[0], end=window[1]))
    raise TypeError(
        "window must be a struct column name (as window() produces) or a (start, end) pair of column names, "
        f"got {window!r}"
    )


def suppress(
    df: "DataFrame",
    key: Columns,
    timestamp: str,
    suppressed: Suppressed,
    window: Optional[Window] = None,
    grace: Optional[Duration] = None,
    tombstone: Optional[str] = None,
    late: str = "drop",
    idle_timeout: Optional[Duration] = None,
) -> "DataFrame":
    """Kafka's ``suppress`` on a streaming DataFrame of updates (a changelog).

    Returns the rows that leave the buffer, with the input's columns; each carries the latest buffered update of
    its key. Works on classic and Spark Connect DataFrames alike.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        A streaming DataFrame of updates with a watermark on ``timestamp`` (e.g. ``aggregate_windowed``'s output).
    key : str or list of str
        The key column(s).
    timestamp : str
        The event-time column.
    suppressed : Suppressed
        What to hold back and for how long: ``Suppressed.until_time_limit(...)`` or
        ``Suppressed.until_window_closes(...)``.
    window : str or tuple of (str, str), optional
        For windowed updates: the window struct column (as ``window()`` produces), or a ``(start, end)`` pair of
        column names. Each key and window is buffered on its own, as Kafka keys a windowed KTable; required by
        ``until_window_closes``.
    grace : datetime.timedelta or int, optional
        For ``until_window_closes``: the windows' grace period (an int is milliseconds).
    tombstone : str, optional
        A boolean column marking deletions.
    late : str
        ``"drop"`` (Kafka's behaviour, the default) or ``"emit"`` (``until_window_closes`` only; beyond Kafka): an
        update for a window that has already closed leaves at once with ``late`` true in an added boolean column;
        every other row has ``late`` false.
    idle_timeout : datetime.timedelta or int, optional
        Event-time clock only, beyond Kafka: once a key's stream time has not moved for that much wall-clock time,
        it runs on with the wall clock, so buffered records leave although no record arrives. Not deterministic;
        needs a processing-time trigger. See docs/suppress.md.

    Returns
    -------
    pyspark.sql.DataFrame
        The streaming DataFrame of what leaves the buffer (a Spark Connect one for a Spark Connect input).

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    pyspark.errors.IllegalArgumentException
        If a value is refused when the operator is built (a column that does not exist, a negative duration, an
        eager buffer for final results...): the message names the parameter, the value and the fix.
    spark_suppress.JarNotFoundError
        If the session's JVM (or Connect server) does not have spark-suppress's jar or plugin.

    Examples
    --------
    Rate limiting: at most one update per user every 30 seconds of event time.

    >>> from datetime import timedelta
    >>> import spark_suppress as ss
    >>> limited = ss.suppress(  # doctest: +SKIP
    ...     updates, key="user", timestamp="ts",
    ...     suppressed=ss.Suppressed.until_time_limit(timedelta(seconds=30), ss.BufferConfig.unbounded()))

    Final results of a windowed count:

    >>> finals = ss.suppress(  # doctest: +SKIP
    ...     counts, key="user", timestamp="ts", window="window", grace=timedelta(minutes=1),
    ...     suppressed=ss.Suppressed.until_window_closes(ss.BufferConfig.unbounded()))
    """
    if not isinstance(suppressed, Suppressed):
        raise TypeError(f"suppressed must be a Suppressed (Suppressed.until_time_limit(...)), got {suppressed!r}")
    if not isinstance(late, str):
        raise TypeError(f'late must be "drop" or "emit", got {late!r}')
    m = _spec.messages()
    spec = m.SuppressSpec(
        key=column_list(key, "key"),
        timestamp=column_name(timestamp, "timestamp"),
        window=_window_wire(window),
        grace_ms=None if grace is None else to_millis(grace, "grace"),
        tombstone=None if tombstone is None else column_name(tombstone, "tombstone"),
        suppressed=suppressed._to_wire(),
        late=_spec.choice(m.LateRecords, late, "late"),
        idle_timeout_ms=None if idle_timeout is None else to_millis(idle_timeout, "idle_timeout"),
    )
    return _transport.of(df=df).suppress(df, spec)
