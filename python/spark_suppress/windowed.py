"""Kafka's windowed aggregation with grace periods and emit strategies (KIP-825) on PySpark DataFrames."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Optional, Sequence, Union

from ._columns import Columns, column_list, column_name
from . import _connect
from ._jvm import dataframe_facade, facade, require_classic
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
) -> "DataFrame":
    """Aggregate a watermarked stream per key and window, emitting as ``emit`` says.

    ``aggregations`` are ordinary Spark aggregate columns (``count``, ``sum``, ``min``, ``max``, ``avg``, ``first``,
    ``last``, aliased or not). The result has the key column(s), a ``window`` struct (``start``, ``end``), one column
    per aggregate, the result's timestamp (named like ``timestamp``) and, for session windows emitting updates, a
    boolean ``retraction`` column marking sessions that a merge removed.
    """
    from pyspark.sql import Column

    if not isinstance(windows, (TimeWindows, SlidingWindows, SessionWindows)):
        raise TypeError(
            "windows must be TimeWindows, SlidingWindows or SessionWindows (e.g. "
            f"TimeWindows.of_size_and_grace(timedelta(minutes=5), timedelta(minutes=1))), got {windows!r}"
        )
    if not isinstance(emit, EmitStrategy):
        raise TypeError(f"emit must be EmitStrategy.on_window_close() or EmitStrategy.on_window_update(), got {emit!r}")
    if isinstance(aggregations, Column) or not isinstance(aggregations, (list, tuple)):
        raise TypeError(f"aggregations must be a list of aggregate columns, e.g. [F.count('*').alias('n')], got {aggregations!r}")
    if not aggregations:
        raise ValueError("aggregations must list at least one aggregate column, e.g. [F.count('*').alias('n')]")
    for a in aggregations:
        if not isinstance(a, Column):
            raise TypeError(f"aggregations must be Spark Columns (F.count('*'), F.sum('x'), ...), got {a!r}")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    spec = {
        "key": column_list(key, "key"),
        "timestamp": column_name(timestamp, "timestamp"),
        "windows": windows._to_json(),
        "emit": emit.mode,
        "name": name,
    }
    if _connect.same_transport({"df": df}):
        return _connect.aggregate_windowed(df, spec, aggregations)
    jfacade = dataframe_facade(df)
    jvm = df.sparkSession.sparkContext._jvm
    jcolumns = jvm.java.util.ArrayList()
    for a in aggregations:
        jcolumns.add(a._jc)
    from pyspark.sql import DataFrame

    return DataFrame(jfacade.aggregateWindowed(df._jdf, json.dumps(spec), jcolumns), df.sparkSession)


def string_fold(column: Union[str, "Column"], initial: str = "", separator: str = "+") -> "Column":
    """Kafka's test aggregation as an aggregate column: ``initial``, then ``separator + value`` per record in arrival
    order (sessions merge as ``left + separator + right``). A typed aggregator applied record by record: its
    result traces exactly which records were aggregated, in which order."""
    from pyspark.sql import Column, SparkSession
    from pyspark.sql import functions as F

    if not isinstance(initial, str) or not isinstance(separator, str):
        raise TypeError(f"initial and separator must be strings, got {initial!r} and {separator!r}")
    col = F.col(column) if isinstance(column, str) else column
    if not isinstance(col, Column):
        raise TypeError(f"column must be a column name or a Column, got {column!r}")
    if _connect.is_connect(col):
        return _connect.string_fold(col, initial, separator)
    from pyspark.sql.classic.column import Column as ClassicColumn

    spark = SparkSession.getActiveSession()
    if spark is None:
        raise RuntimeError("string_fold needs an active SparkSession")
    require_classic(spark)
    return ClassicColumn(facade(spark).stringFold(col._jc, initial, separator))
