"""The one place that chooses between the two transports: py4j (``_jvm``) and Spark Connect (``_connect``).

The operators build their spec message once (``_spec``) and ask :func:`of` for the transport of their inputs;
every transport module has the functions of :class:`Transport`, and the test drivers the methods of :class:`Driver`.
Nothing else in the package asks which kind of session it runs on, and neither transport imports this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Protocol, Sequence

from . import _connect, _connect_testing, _jvm
from ._pyspark import is_connect

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, Row, SparkSession
    from pyspark.sql.streaming import StreamingQuery
    from pyspark.sql.types import StructType

    from .proto.spec_pb2 import AggregateSpec, AggregateWindowedSpec, JoinVersionedSpec, SuppressSpec


class Transport(Protocol):
    """What each transport module offers: the operators from their specs, metrics, and ``string_fold``."""

    def suppress(self, df: "DataFrame", spec: "SuppressSpec") -> "DataFrame": ...

    def aggregate_windowed(
        self, df: "DataFrame", spec: "AggregateWindowedSpec", aggregations: Sequence["Column"]
    ) -> "DataFrame": ...

    def aggregate(self, df: "DataFrame", spec: "AggregateSpec", aggregations: Sequence["Column"]) -> "DataFrame": ...

    def join_versioned(
        self,
        stream_df: "DataFrame",
        table_df: "DataFrame",
        initial_versions: Optional["DataFrame"],
        spec: "JoinVersionedSpec",
    ) -> "DataFrame": ...

    def string_fold(self, column: "Column", initial: str, separator: str) -> "Column": ...

    def latest(self, column: "Column", order_by: Optional["Column"]) -> "Column": ...

    def metrics(self, query: "StreamingQuery") -> Dict[str, Dict[str, float]]: ...


class Driver(Protocol):
    """What each transport's test driver offers to :class:`spark_suppress.testing.TestDriver`."""

    def parse_schema(self, ddl: str) -> "StructType": ...

    def add_input(
        self, name: str, schema: "StructType", timestamp: Optional[str], watermark_delay: str
    ) -> "DataFrame": ...

    def input(self) -> "DataFrame": ...

    def start(self, pipeline: "DataFrame") -> None: ...

    def step(self, input: str, schema: "StructType", rows: List[Any]) -> List["Row"]: ...

    def advance(self) -> List["Row"]: ...

    def idle(self, ms: int) -> List["Row"]: ...

    def restart(self) -> None: ...

    def stop(self) -> None: ...

    def query(self) -> Any: ...


def of(**objects: Any) -> Transport:
    """The transport of ``objects`` (DataFrames, a Column or a query, by parameter name; None ones are ignored).

    Raises ``TypeError`` naming each when some are Spark Connect objects and others classic ones.
    """
    kinds = {name: is_connect(obj) for name, obj in objects.items() if obj is not None}
    if len(set(kinds.values())) > 1:
        described = ", ".join(f"{n} is a {'Spark Connect' if c else 'classic'} DataFrame" for n, c in kinds.items())
        raise TypeError(
            f"all DataFrames of one call must come from the same session: {described}. Create them all from the "
            "Spark Connect session (or all from the classic one)."
        )
    return _connect if any(kinds.values()) else _jvm


def driver(spark: "SparkSession") -> Driver:
    """The test driver for ``spark``: on the JVM for a classic session, over public Connect calls for Connect."""
    if is_connect(spark):
        return _connect_testing.Driver(spark)
    return _jvm.Driver(spark)
