"""Kafka's windowed aggregation with grace periods and emit strategies (KIP-825) on PySpark DataFrames."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Optional, Sequence, Union

from ._columns import Columns, column_list, column_name
from ._durations import Duration, to_millis
from . import _connect
from ._jvm import dataframe_facade, facade, require_classic
from .suppressed import check_name
from .windows import EmitStrategy, SessionWindows, SlidingWindows, TimeWindows

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

Windows = Union[TimeWindows, SlidingWindows, SessionWindows]


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

    ``aggregations`` are ordinary Spark aggregate columns (``count``, ``sum``, ``min``, ``max``, ``avg``, ``first``,
    ``last``, aliased or not). The result has the key column(s), a ``window`` struct (``start``, ``end``), one column
    per aggregate, the result's timestamp (named like ``timestamp``) and, for session windows emitting updates, a
    boolean ``retraction`` column marking sessions that a merge removed.

    ``late="emit"`` (beyond Kafka; default ``"drop"``, Kafka's behaviour: dropped and counted): a record dropped
    because a window it belongs to has closed also leaves, as a row with ``late`` true: its key, the window it
    missed, the aggregates of that record alone and its own timestamp, once per record and closed window. Every
    other row has ``late`` false; the ``late`` column exists only under this option.

    ``idle_timeout=timedelta(...)`` (beyond Kafka): once a key's stream time has not moved for that much wall-clock
    time, it runs on with the wall clock, so the last windows close although no record arrives. Not deterministic;
    needs a processing-time trigger (``trigger(processingTime=...)``). See docs/emit.md.
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
    spec = {
        "key": column_list(key, "key"),
        "timestamp": column_name(timestamp, "timestamp"),
        "windows": windows._to_json(),
        "emit": emit._mode,
        "name": name,
        "late": late,
        "idleTimeoutMs": None if idle_timeout is None else to_millis(idle_timeout, "idle_timeout"),
    }
    if _connect.same_transport({"df": df}):
        return _connect.aggregate_windowed(df, spec, aggregations)
    from pyspark.sql import DataFrame

    jdf = dataframe_facade(df).aggregateWindowed(df._jdf, json.dumps(spec), _java_columns(df, aggregations))
    return DataFrame(jdf, df.sparkSession)


def aggregate(
    df: "DataFrame",
    key: Columns,
    timestamp: str,
    aggregations: Sequence["Column"],
    name: Optional[str] = None,
) -> "DataFrame":
    """Aggregate a watermarked stream per key, without windows: Kafka's ``groupByKey().count()/reduce()/aggregate()``.

    Every input row with a key updates its key's aggregate and emits it at once (the table's changelog: one update
    row per input row) with the key column(s), one column per aggregate and the update's timestamp (named like
    ``timestamp``: the larger of the row's and the aggregate's previous timestamp). Follow it with
    :func:`spark_suppress.suppress` and ``Suppressed.until_time_limit`` to rate-limit the updates; both run in the
    same streaming query.
    """
    _check_aggregations(aggregations, name)
    spec = {"key": column_list(key, "key"), "timestamp": column_name(timestamp, "timestamp"), "name": name}
    if _connect.same_transport({"df": df}):
        return _connect.aggregate(df, spec, aggregations)
    from pyspark.sql import DataFrame

    return DataFrame(dataframe_facade(df).aggregate(df._jdf, json.dumps(spec), _java_columns(df, aggregations)), df.sparkSession)


def _check_aggregations(aggregations, name) -> None:
    """Aggregations are a list of Columns (classic or Spark Connect ones)."""
    from ._pyspark import is_column

    if is_column(aggregations) or not isinstance(aggregations, (list, tuple)):
        raise TypeError(f"aggregations must be a list of aggregate columns, e.g. [F.count('*').alias('n')], got {aggregations!r}")
    for a in aggregations:
        if not is_column(a):
            raise TypeError(f"aggregations must be Spark Columns (F.count('*'), F.sum('x'), ...), got {a!r}")
    check_name(name)


def _java_columns(df: "DataFrame", aggregations):
    jcolumns = df.sparkSession.sparkContext._jvm.java.util.ArrayList()
    for a in aggregations:
        jcolumns.add(a._jc)
    return jcolumns


def latest(column: Union[str, "Column"], order_by: Union[str, "Column", None] = None) -> "Column":
    """Kafka's ``reduce((v1, v2) -> v2)`` as an aggregate column: the latest non-null value to *arrive*.

    Spark's ``last`` keeps the value of the record with the latest event time, which differs from Kafka's reduce
    for out-of-order records. Here a later micro-batch arrives after an earlier one whatever its event times; within
    one micro-batch the record with the greatest ``order_by`` arrived last (e.g. the Kafka source's ``offset``
    column), and without ``order_by`` (or on ties) the order in which the key's records reach the operator, which is
    a source partition's order. Null values are skipped, as Kafka's reduce never sees one.

    Parameters
    ----------
    column : str or Column
        The value to keep.
    order_by : str or Column, optional
        Orders the records of one micro-batch (numbers, strings, timestamps, ...); the greatest arrived last.

    Returns
    -------
    Column
        An aggregate column for :func:`aggregate_windowed` and :func:`aggregate` (alias it to name the result).

    Raises
    ------
    TypeError
        If ``column`` or ``order_by`` is neither a column name nor a Column.

    Examples
    --------
    >>> ss.aggregate(orders, key="user", timestamp="ts",
    ...              aggregations=[ss.latest("status", order_by="offset").alias("status")])  # doctest: +SKIP
    """
    from ._pyspark import is_column

    def as_column(c: Union[str, "Column"], what: str) -> "Column":
        from pyspark.sql import functions as F

        col = F.col(c) if isinstance(c, str) else c
        if not is_column(col):
            raise TypeError(f"{what} must be a column name or a Column, got {c!r}")
        return col

    arguments = [as_column(column, "column")]
    if order_by is not None:
        arguments.append(as_column(order_by, "order_by"))
    if _connect.is_connect(arguments[0]):
        from pyspark.sql.connect import functions as CF

        return CF.call_function(_LATEST, *arguments)
    from pyspark.sql import functions as F

    return F.call_function(_LATEST, *arguments)


# The session function spark-suppress's aggregations register and evaluate by arrival (Scala: api.Latest).
_LATEST = "spark_suppress_latest"


def string_fold(column: Union[str, "Column"], initial: str = "", separator: str = "+") -> "Column":
    """Kafka's test aggregation as an aggregate column: ``initial``, then ``separator + value`` per record in arrival
    order (sessions merge as ``left + separator + right``). A typed aggregator applied record by record: its
    result traces exactly which records were aggregated, in which order."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from ._pyspark import classic_column, is_column

    if not isinstance(initial, str) or not isinstance(separator, str):
        raise TypeError(f"initial and separator must be strings, got {initial!r} and {separator!r}")
    col = F.col(column) if isinstance(column, str) else column
    if not is_column(col):
        raise TypeError(f"column must be a column name or a Column, got {column!r}")
    if _connect.is_connect(col):
        return _connect.string_fold(col, initial, separator)
    spark = SparkSession.getActiveSession()
    if spark is None:
        raise RuntimeError("string_fold needs an active SparkSession")
    require_classic(spark)
    return classic_column(facade(spark).stringFold(col._jc, initial, separator))
