"""What differs between the PySpark lines the package runs on, in one place.

From PySpark 4.0 on, ``pyspark.sql.Column`` and ``pyspark.sql.DataFrame`` are the common bases of the classic and
the Spark Connect classes, and the classic ones live in ``pyspark.sql.classic``. On 3.5 they are the classic
classes themselves, and Spark Connect's (``pyspark.sql.connect``) are unrelated to them.
"""

from __future__ import annotations

from typing import Any


def _connect_class(module: str, name: str) -> Any:
    try:
        return getattr(__import__(module, fromlist=[name]), name)
    except ImportError:  # a classic-only PySpark 3.5 without the Connect extras
        return None


def is_connect(obj: Any) -> bool:
    """Whether ``obj`` (a session, DataFrame, Column or query) belongs to a Spark Connect client, on every line.

    Its class's module says so without importing either side, so it works with ``pyspark-client`` alone.
    """
    return type(obj).__module__.startswith("pyspark.sql.connect")


def is_column(obj: Any) -> bool:
    """A classic or a Spark Connect Column, on every line."""
    from pyspark.sql import Column

    connect = _connect_class("pyspark.sql.connect.column", "Column")
    return isinstance(obj, Column) or (connect is not None and isinstance(obj, connect))


def is_dataframe(obj: Any) -> bool:
    """A classic or a Spark Connect DataFrame, on every line."""
    from pyspark.sql import DataFrame

    connect = _connect_class("pyspark.sql.connect.dataframe", "DataFrame")
    return isinstance(obj, DataFrame) or (connect is not None and isinstance(obj, connect))


def classic_column(jc: Any) -> Any:
    """A classic Column around a JVM Column."""
    try:
        from pyspark.sql.classic.column import Column
    except ImportError:  # PySpark 3.5
        from pyspark.sql.column import Column  # type: ignore[assignment]
    return Column(jc)
