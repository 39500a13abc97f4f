"""Windowed aggregation with Kafka's emit strategies (KIP-825), the non-windowed aggregation (a KTable) and their
configuration: ``TimeWindows``, ``SlidingWindows``, ``SessionWindows`` and ``EmitStrategy`` (immutable).

Python checks argument types; values are checked on the JVM when the aggregation is built, where every rule lives
once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from . import _spec, _transport
from ._columns import Columns, check_name, column_list, column_name
from ._durations import Duration, to_millis
from ._pyspark import is_column

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from .proto import spec_pb2


@dataclass(frozen=True)
class TimeWindows:
    """Tumbling (the default) or hopping windows ``[start, start + size)``, starting at multiples of the advance
    from the epoch (Kafka's ``TimeWindows``). A window takes records until ``end + grace <= stream time``.

    Parameters
    ----------
    size_ms, advance_ms, grace_ms : int
        Size, advance and grace in milliseconds; build one with :meth:`of_size_and_grace` or
        :meth:`of_size_with_no_grace`.

    Raises
    ------
    TypeError
        From the factories, when a duration is neither a ``timedelta`` nor an int.

    Examples
    --------
    >>> from datetime import timedelta
    >>> import spark_suppress as ss
    >>> ss.TimeWindows.of_size_and_grace(timedelta(minutes=5), timedelta(minutes=1))
    TimeWindows(size_ms=300000, advance_ms=300000, grace_ms=60000)
    """

    size_ms: int
    advance_ms: int
    grace_ms: int

    @staticmethod
    def of_size_and_grace(size: Duration, grace: Duration) -> "TimeWindows":
        """Tumbling windows of ``size``, taking late records until ``grace`` after their end.

        Parameters
        ----------
        size : datetime.timedelta or int
            The windows' size (an int is milliseconds).
        grace : datetime.timedelta or int
            How long after its end a window still takes records.

        Returns
        -------
        TimeWindows
            Tumbling windows; :meth:`advance_by` makes them hop.

        Raises
        ------
        TypeError
            If a duration is neither a ``timedelta`` nor an int.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.TimeWindows.of_size_and_grace(10_000, 2_000).grace_ms
        2000
        """
        size_ms = to_millis(size, "TimeWindows size")
        return TimeWindows(size_ms, size_ms, to_millis(grace, "TimeWindows grace"))

    @staticmethod
    def of_size_with_no_grace(size: Duration) -> "TimeWindows":
        """Tumbling windows of ``size`` without grace: a window closes at its end.

        Parameters
        ----------
        size : datetime.timedelta or int
            The windows' size (an int is milliseconds).

        Returns
        -------
        TimeWindows
            Tumbling windows with grace 0.

        Raises
        ------
        TypeError
            If ``size`` is neither a ``timedelta`` nor an int.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.TimeWindows.of_size_with_no_grace(10)
        TimeWindows(size_ms=10, advance_ms=10, grace_ms=0)
        """
        return TimeWindows.of_size_and_grace(size, 0)

    def advance_by(self, advance: Duration) -> "TimeWindows":
        """Hopping windows: a copy with a new window every ``advance`` (``0 < advance <= size``).

        Parameters
        ----------
        advance : datetime.timedelta or int
            The distance between window starts (an int is milliseconds).

        Returns
        -------
        TimeWindows
            The hopping copy.

        Raises
        ------
        TypeError
            If ``advance`` is neither a ``timedelta`` nor an int.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.TimeWindows.of_size_with_no_grace(10_000).advance_by(1_000).advance_ms
        1000
        """
        return replace(self, advance_ms=to_millis(advance, "advance"))

    def _to_wire(self) -> "spec_pb2.Windows":
        m = _spec.messages()
        return m.Windows(time=m.TimeWindows(size_ms=self.size_ms, advance_ms=self.advance_ms, grace_ms=self.grace_ms))


@dataclass(frozen=True)
class SlidingWindows:
    """Kafka's sliding windows: ``[t - time_difference, t]`` (both ends inclusive) ending at every record ``t``, and
    one starting 1 ms after every record that later records follow within the time difference.

    Parameters
    ----------
    time_difference_ms, grace_ms : int
        Time difference and grace in milliseconds; build one with :meth:`of_time_difference_and_grace`.

    Raises
    ------
    TypeError
        From the factories, when a duration is neither a ``timedelta`` nor an int.

    Examples
    --------
    >>> import spark_suppress as ss
    >>> ss.SlidingWindows.of_time_difference_and_grace(10, 5)
    SlidingWindows(time_difference_ms=10, grace_ms=5)
    """

    time_difference_ms: int
    grace_ms: int

    @staticmethod
    def of_time_difference_and_grace(time_difference: Duration, grace: Duration) -> "SlidingWindows":
        """Sliding windows of ``time_difference``, taking late records until ``grace`` after their end.

        Parameters
        ----------
        time_difference : datetime.timedelta or int
            The largest distance between two records of one window (an int is milliseconds).
        grace : datetime.timedelta or int
            How long after its end a window still takes records.

        Returns
        -------
        SlidingWindows
            The windows.

        Raises
        ------
        TypeError
            If a duration is neither a ``timedelta`` nor an int.

        Examples
        --------
        >>> from datetime import timedelta
        >>> import spark_suppress as ss
        >>> ss.SlidingWindows.of_time_difference_and_grace(timedelta(seconds=10), 0).time_difference_ms
        10000
        """
        return SlidingWindows(
            to_millis(time_difference, "SlidingWindows time_difference"), to_millis(grace, "SlidingWindows grace")
        )

    @staticmethod
    def of_time_difference_with_no_grace(time_difference: Duration) -> "SlidingWindows":
        """Sliding windows of ``time_difference`` without grace.

        Parameters
        ----------
        time_difference : datetime.timedelta or int
            The largest distance between two records of one window (an int is milliseconds).

        Returns
        -------
        SlidingWindows
            The windows, with grace 0.

        Raises
        ------
        TypeError
            If ``time_difference`` is neither a ``timedelta`` nor an int.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.SlidingWindows.of_time_difference_with_no_grace(10).grace_ms
        0
        """
        return SlidingWindows.of_time_difference_and_grace(time_difference, 0)

    def _to_wire(self) -> "spec_pb2.Windows":
        m = _spec.messages()
        return m.Windows(sliding=m.SlidingWindows(time_difference_ms=self.time_difference_ms, grace_ms=self.grace_ms))


@dataclass(frozen=True)
class SessionWindows:
    """Session windows: records of a key at most ``inactivity_gap`` apart form one session (Kafka's
    ``SessionWindows``). A session takes records until ``last record + gap + grace < stream time``.

    Parameters
    ----------
    inactivity_gap_ms, grace_ms : int
        Gap and grace in milliseconds; build one with :meth:`of_inactivity_gap_and_grace`.

    Raises
    ------
    TypeError
        From the factories, when a duration is neither a ``timedelta`` nor an int.

    Examples
    --------
    >>> import spark_suppress as ss
    >>> ss.SessionWindows.of_inactivity_gap_and_grace(30_000, 0)
    SessionWindows(inactivity_gap_ms=30000, grace_ms=0)
    """

    inactivity_gap_ms: int
    grace_ms: int

    @staticmethod
    def of_inactivity_gap_and_grace(inactivity_gap: Duration, grace: Duration) -> "SessionWindows":
        """Sessions closed by ``inactivity_gap``, taking late records until ``grace`` after their end.

        Parameters
        ----------
        inactivity_gap : datetime.timedelta or int
            The largest gap between two records of one session (an int is milliseconds).
        grace : datetime.timedelta or int
            How long after its end a session still takes records.

        Returns
        -------
        SessionWindows
            The windows.

        Raises
        ------
        TypeError
            If a duration is neither a ``timedelta`` nor an int.

        Examples
        --------
        >>> from datetime import timedelta
        >>> import spark_suppress as ss
        >>> ss.SessionWindows.of_inactivity_gap_and_grace(timedelta(seconds=30), timedelta(seconds=5)).grace_ms
        5000
        """
        return SessionWindows(
            to_millis(inactivity_gap, "SessionWindows inactivity_gap"),
            to_millis(grace, "SessionWindows grace"),
        )

    @staticmethod
    def of_inactivity_gap_with_no_grace(inactivity_gap: Duration) -> "SessionWindows":
        """Sessions closed by ``inactivity_gap``, without grace.

        Parameters
        ----------
        inactivity_gap : datetime.timedelta or int
            The largest gap between two records of one session (an int is milliseconds).

        Returns
        -------
        SessionWindows
            The windows, with grace 0.

        Raises
        ------
        TypeError
            If ``inactivity_gap`` is neither a ``timedelta`` nor an int.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.SessionWindows.of_inactivity_gap_with_no_grace(5).inactivity_gap_ms
        5
        """
        return SessionWindows.of_inactivity_gap_and_grace(inactivity_gap, 0)

    def _to_wire(self) -> "spec_pb2.Windows":
        m = _spec.messages()
        return m.Windows(session=m.SessionWindows(inactivity_gap_ms=self.inactivity_gap_ms, grace_ms=self.grace_ms))


Windows = Union[TimeWindows, SlidingWindows, SessionWindows]

# EmitStrategy's private wire strings and the enum values (spec.proto) they cross as.
_EMIT = {"onWindowClose": "EMIT_STRATEGY_ON_WINDOW_CLOSE", "onWindowUpdate": "EMIT_STRATEGY_ON_WINDOW_UPDATE"}


@dataclass(frozen=True, kw_only=True)
class EmitStrategy:
    """When a windowed aggregation emits (Kafka's ``EmitStrategy``, KIP-825), chosen per operator.

    Parameters
    ----------
    _mode : str
        Private: build one with :meth:`on_window_close` or :meth:`on_window_update`.

    Examples
    --------
    >>> import spark_suppress as ss
    >>> ss.EmitStrategy.on_window_close() == ss.EmitStrategy.on_window_close()
    True
    """

    _mode: str

    @staticmethod
    def on_window_close() -> "EmitStrategy":
        """One final row per key and window, when the window closes.

        Returns
        -------
        EmitStrategy
            The strategy.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.EmitStrategy.on_window_close()
        EmitStrategy(_mode='onWindowClose')
        """
        return EmitStrategy(_mode="onWindowClose")

    @staticmethod
    def on_window_update() -> "EmitStrategy":
        """A row for every change of a window (Kafka's default); sessions also retract merged sessions.

        Returns
        -------
        EmitStrategy
            The strategy.

        Examples
        --------
        >>> import spark_suppress as ss
        >>> ss.EmitStrategy.on_window_update()
        EmitStrategy(_mode='onWindowUpdate')
        """
        return EmitStrategy(_mode="onWindowUpdate")


def aggregate_windowed(
    df: "DataFrame",
    key: Columns,
    timestamp: str,
    windows: Windows,
    aggregations: Sequence["Column"],
    emit: EmitStrategy = EmitStrategy.on_window_update(),
    name: Optional[str] = None,
    late: str = "drop",
    idle_timeout: Optional[Duration] = None,
) -> "DataFrame":
    """Aggregate a watermarked stream per key and window, emitting as ``emit`` says.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        A streaming DataFrame with a watermark on ``timestamp``.
    key : str or list of str
        The key column(s).
    timestamp : str
        The event-time column.
    windows : TimeWindows, SlidingWindows or SessionWindows
        The windows and their grace period.
    aggregations : list of pyspark.sql.Column
        Ordinary Spark aggregate columns (``count``, ``sum``, ``min``, ``max``, ``avg``, ``first``, ``last``,
        :func:`string_fold`), aliased or not.
    emit : EmitStrategy
        ``EmitStrategy.on_window_update()`` (Kafka's default) or ``EmitStrategy.on_window_close()``.
    name : str, optional
        The operator's name, used in errors and metrics.
    late : str
        ``"drop"`` (Kafka's behaviour: dropped and counted) or ``"emit"`` (beyond Kafka): a record dropped because
        a window it belongs to has closed also leaves, as a row with ``late`` true (its key, the window it missed,
        the aggregates of that record alone and its own timestamp); every other row has ``late`` false.
    idle_timeout : datetime.timedelta or int, optional
        Beyond Kafka: once a key's stream time has not moved for that much wall-clock time, it runs on with the
        wall clock, so the last windows close although no record arrives. Not deterministic; needs a
        processing-time trigger. See docs/emit.md.

    Returns
    -------
    pyspark.sql.DataFrame
        The key column(s), a ``window`` struct (``start``, ``end``), one column per aggregate, the result's
        timestamp (named like ``timestamp``) and, for session windows emitting updates, a boolean ``retraction``
        column marking sessions that a merge removed.

    Raises
    ------
    TypeError
        If an argument has the wrong type (e.g. ``aggregations`` is a single Column, not a list).
    pyspark.errors.IllegalArgumentException
        If a value is refused when the aggregation is built (a missing column, a negative duration...).
    spark_suppress.JarNotFoundError
        If the session's JVM (or Connect server) does not have spark-suppress's jar or plugin.

    Examples
    --------
    >>> from datetime import timedelta
    >>> from pyspark.sql import functions as F
    >>> import spark_suppress as ss
    >>> counts = ss.aggregate_windowed(  # doctest: +SKIP
    ...     events, key="user", timestamp="ts",
    ...     windows=ss.TimeWindows.of_size_and_grace(timedelta(minutes=5), timedelta(minutes=1)),
    ...     aggregations=[F.count("*").alias("n")], emit=ss.EmitStrategy.on_window_close())
    """
    if not isinstance(windows, (TimeWindows, SlidingWindows, SessionWindows)):
        raise TypeError(
            "windows must be TimeWindows, SlidingWindows or SessionWindows (e.g. "
            f"TimeWindows.of_size_and_grace(timedelta(minutes=5), timedelta(minutes=1))), got {windows!r}"
        )
    if not isinstance(emit, EmitStrategy):
        raise TypeError(f"emit must be EmitStrategy.on_window_close() or EmitStrategy.on_window_update(), got {emit!r}")
    _check_aggregations(aggregations, name)
    if not isinstance(late, str):
        raise TypeError(f'late must be "drop" or "emit", got {late!r}')
    m = _spec.messages()
    spec = m.AggregateWindowedSpec(
        key=column_list(key, "key"),
        timestamp=column_name(timestamp, "timestamp"),
        windows=windows._to_wire(),
        emit=m.EmitStrategy.Value(_EMIT[emit._mode]),
        name=name,
        late=_spec.choice(m.LateRecords, late, "late"),
        idle_timeout_ms=None if idle_timeout is None else to_millis(idle_timeout, "idle_timeout"),
    )
    return _transport.of(df=df).aggregate_windowed(df, spec, aggregations)


def aggregate(
    df: "DataFrame",
    key: Columns,
    timestamp: str,
    aggregations: Sequence["Column"],
    name: Optional[str] = None,
) -> "DataFrame":
    """Aggregate a watermarked stream per key, without windows: Kafka's ``groupByKey().count()/reduce()/aggregate()``.

    Every input row with a key updates its key's aggregate and emits it at once (the table's changelog: one update
    row per input row). Follow it with :func:`spark_suppress.suppress` and ``Suppressed.until_time_limit`` to
    rate-limit the updates; both run in the same streaming query.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        A streaming DataFrame with a watermark on ``timestamp``.
    key : str or list of str
        The key column(s).
    timestamp : str
        The event-time column.
    aggregations : list of pyspark.sql.Column
        Ordinary Spark aggregate columns, aliased or not.
    name : str, optional
        The operator's name, used in errors and metrics.

    Returns
    -------
    pyspark.sql.DataFrame
        The key column(s), one column per aggregate and the update's timestamp (named like ``timestamp``: the
        larger of the row's and the aggregate's previous timestamp).

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    pyspark.errors.IllegalArgumentException
        If a value is refused when the aggregation is built.
    spark_suppress.JarNotFoundError
        If the session's JVM (or Connect server) does not have spark-suppress's jar or plugin.

    Examples
    --------
    >>> from datetime import timedelta
    >>> from pyspark.sql import functions as F
    >>> import spark_suppress as ss
    >>> totals = ss.aggregate(events, key="user", timestamp="ts",  # doctest: +SKIP
    ...                       aggregations=[F.sum("amount").alias("total")])
    """
    _check_aggregations(aggregations, name)
    spec = _spec.messages().AggregateSpec(
        key=column_list(key, "key"), timestamp=column_name(timestamp, "timestamp"), name=name
    )
    return _transport.of(df=df).aggregate(df, spec, aggregations)


def _check_aggregations(aggregations: Any, name: Optional[str]) -> None:
    """Aggregations are a list of Columns (classic or Spark Connect ones)."""
    if is_column(aggregations) or not isinstance(aggregations, (list, tuple)):
        raise TypeError(
            f"aggregations must be a list of aggregate columns, e.g. [F.count('*').alias('n')], got {aggregations!r}"
        )
    for a in aggregations:
        if not is_column(a):
            raise TypeError(f"aggregations must be Spark Columns (F.count('*'), F.sum('x'), ...), got {a!r}")
    check_name(name)


def _as_column(column: Union[str, "Column"], what: str) -> "Column":
    from pyspark.sql import functions as F

    col = F.col(column) if isinstance(column, str) else column
    if not is_column(col):
        raise TypeError(f"{what} must be a column name or a Column, got {column!r}")
    return col


def latest(column: Union[str, "Column"], order_by: Union[str, "Column", None] = None) -> "Column":
    """Kafka's ``reduce((v1, v2) -> v2)`` as an aggregate column: the latest non-null value to *arrive*.

    Spark's ``last`` keeps the value of the record with the latest event time, which differs from Kafka's reduce
    for out-of-order records. Here a later micro-batch arrives after an earlier one whatever its event times; within
    one micro-batch the record with the greatest ``order_by`` arrived last (e.g. the Kafka source's ``offset``
    column), and without ``order_by`` (or on ties) the order in which the key's records reach the operator, which is
    a source partition's order. Null values are skipped, as Kafka's reduce never sees one.

    Parameters
    ----------
    column : str or pyspark.sql.Column
        The value to keep.
    order_by : str or pyspark.sql.Column, optional
        Orders the records of one micro-batch (numbers, strings, timestamps, ...); the greatest arrived last.

    Returns
    -------
    pyspark.sql.Column
        An aggregate column for :func:`aggregate_windowed` and :func:`aggregate` (alias it to name the result).

    Raises
    ------
    TypeError
        If ``column`` or ``order_by`` is neither a column name nor a Column, or they come from a classic and a
        Spark Connect session.

    Examples
    --------
    >>> import spark_suppress as ss
    >>> ss.aggregate(orders, key="user", timestamp="ts",
    ...              aggregations=[ss.latest("status", order_by="offset").alias("status")])  # doctest: +SKIP
    """
    value = _as_column(column, "column")
    order = None if order_by is None else _as_column(order_by, "order_by")
    return _transport.of(column=value, order_by=order).latest(value, order)


def string_fold(column: Union[str, "Column"], initial: str = "", separator: str = "+") -> "Column":
    """Kafka's test aggregation as an aggregate column: ``initial``, then ``separator + value`` per record in
    arrival order (sessions merge as ``left + separator + right``).

    A typed aggregator applied record by record: its result traces exactly which records were aggregated, in
    which order.

    Parameters
    ----------
    column : str or pyspark.sql.Column
        The values to fold (cast to strings).
    initial : str
        The aggregate before the first record.
    separator : str
        Put before each value.

    Returns
    -------
    pyspark.sql.Column
        An aggregate column for :func:`aggregate_windowed` or :func:`aggregate` (a Spark Connect column when
        ``column`` is one, or a name while the active session is one).

    Raises
    ------
    TypeError
        If ``initial`` or ``separator`` is not a string, or ``column`` is neither a name nor a Column.
    RuntimeError
        If the process has no SparkSession (classic sessions: the thread's active session is used, else the
        default one, as ``SparkSession.active()`` finds them, so worker threads may call it too).
    spark_suppress.ConnectPluginMissingError
        When used on a Spark Connect server without the expression plugin.

    Examples
    --------
    >>> import spark_suppress as ss
    >>> trace = ss.string_fold("value", initial="0", separator="+").alias("trace")  # doctest: +SKIP
    """
    if not isinstance(initial, str) or not isinstance(separator, str):
        raise TypeError(f"initial and separator must be strings, got {initial!r} and {separator!r}")
    col = _as_column(column, "column")
    return _transport.of(column=col).string_fold(col, initial, separator)
