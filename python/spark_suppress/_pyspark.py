"""What differs between the PySpark lines the package runs on, in one place.

From PySpark 4.0 on, ``pyspark.sql.Column`` and ``pyspark.sql.DataFrame`` are the common bases of the classic and
the Spark Connect classes, and the classic ones live in ``pyspark.sql.classic``. On 3.5 they are the classic
classes themselves, and Spark Connect's (``pyspark.sql.connect``) are unrelated to them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Row
    from pyspark.sql.types import StructType


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


def rows_to_arrow(rows: List[Any], schema: "StructType") -> "pa.Table":
    """Local rows as Spark Connect's ``createDataFrame`` turns them into Arrow, on every line (its converter moved
    from ``pyspark.sql.connect`` to ``pyspark.sql`` in 4.0, and took whether to use large string types)."""
    try:
        from pyspark.sql.conversion import LocalDataToArrowConversion
    except ImportError:  # PySpark 3.5
        from pyspark.sql.connect.conversion import LocalDataToArrowConversion  # type: ignore[attr-defined,no-redef]

        return LocalDataToArrowConversion.convert(rows, schema)  # type: ignore[call-arg]
    return LocalDataToArrowConversion.convert(rows, schema, False)


def arrow_to_rows(table: "pa.Table", schema: "StructType") -> List["Row"]:
    """An Arrow table read from files Spark wrote, as Spark Connect's ``collect`` turns the server's into Rows, on
    every line. It is cast to the types the server sends first: Spark writes timestamps as INT96, which Arrow reads
    without a time zone (the converter would take them for local times), and names a list's element differently."""
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        from pyspark.sql.conversion import ArrowTableToRowsConversion
    except ImportError:  # PySpark 3.5
        from pyspark.sql.connect.conversion import ArrowTableToRowsConversion  # type: ignore[attr-defined,no-redef]
    try:  # 4.2 on asks for the time zone of timestamps; the lines before put them in UTC
        arrow_schema = to_arrow_schema(schema, timezone="UTC")
    except TypeError:
        arrow_schema = to_arrow_schema(schema)
    return ArrowTableToRowsConversion.convert(table.cast(arrow_schema), schema)
