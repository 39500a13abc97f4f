"""The operators, as functions on PySpark DataFrames. Each crosses to the JVM once, through the facade."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Dict, Optional, Tuple, Union

from ._columns import Columns, column_list, column_name
from ._durations import Duration, to_millis
from . import _connect
from ._jvm import dataframe_facade, facade
from .suppressed import Suppressed

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import StreamingQuery

Window = Union[str, Tuple[str, str]]


def _wrap(jdf, like: "DataFrame") -> "DataFrame":
    from pyspark.sql import DataFrame

    return DataFrame(jdf, like.sparkSession)


def _window_json(window: Optional[Window]):
    if window is None:
        return None
    if isinstance(window, str):
        return {"column": window}
    if isinstance(window, tuple) and len(window) == 2 and all(isinstance(w, str) for w in window):
        return {"start": window[0], "end": window[1]}
    raise TypeError(
        f"window must be a struct column name (as window() produces) or a (start, end) pair of column names, got {window!r}"
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

    ``key`` names the key column(s), ``timestamp`` the event-time column (with a watermark), ``tombstone`` an
    optional boolean column marking deletions. ``until_window_closes`` also needs ``window`` (the window struct
    column, or a ``(start, end)`` pair) and ``grace``. Returns the rows that leave the buffer, with the input's
    columns; each carries the latest buffered update of its key.

    ``late="emit"`` (``until_window_closes`` only; beyond Kafka): an update for a window that has already closed
    leaves at once with ``late`` true in an added boolean column (Kafka lets it out unflagged, like a second final
    result, which is the default ``"drop"``: nothing is held back for it); every other row has ``late`` false.

    ``idle_timeout=timedelta(...)`` (event-time clock only; beyond Kafka): once a key's stream time has not moved for
    that much wall-clock time, it runs on with the wall clock, so buffered records leave although no record arrives.
    Not deterministic; needs a processing-time trigger (``trigger(processingTime=...)``). See docs/suppress.md.
    """
    if not isinstance(suppressed, Suppressed):
        raise TypeError(f"suppressed must be a Suppressed (Suppressed.until_time_limit(...)), got {suppressed!r}")
    if not isinstance(late, str):
        raise TypeError(f'late must be "drop" or "emit", got {late!r}')
    spec = {
        "key": column_list(key, "key"),
        "timestamp": column_name(timestamp, "timestamp"),
        "window": _window_json(window),
        "graceMs": None if grace is None else to_millis(grace, "grace"),
        "tombstone": None if tombstone is None else column_name(tombstone, "tombstone"),
        "suppressed": suppressed._to_json(),
        "late": late,
        "idleTimeoutMs": None if idle_timeout is None else to_millis(idle_timeout, "idle_timeout"),
    }
    if _connect.same_transport({"df": df}):
        return _connect.suppress(df, spec)
    jdf = dataframe_facade(df).suppress(df._jdf, json.dumps(spec))
    return _wrap(jdf, df)


def metrics(query: "StreamingQuery") -> Dict[str, Dict[str, float]]:
    """Metrics of the spark-suppress operators in a running (or stopped) query, by operator name.

    Names follow Kafka's (``suppression-emit-total``, ``suppression-buffer-count-current``, ...). Operators are
    found through the query's progress reports, so a query that has not finished a micro-batch yet has none.
    """
    if _connect.is_connect(query):
        return _connect.metrics(query)
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None:
        raise RuntimeError("metrics(query) needs the query's SparkSession to be active in this thread")
    return json.loads(facade(spark).metrics(query._jsq))
