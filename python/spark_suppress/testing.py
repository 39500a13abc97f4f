"""Testing pipelines one micro-batch at a time, as Kafka users do with ``TopologyTestDriver``.

::

    driver = TestDriver(spark, "user STRING, ts TIMESTAMP, n LONG", timestamp="ts")
    driver.start(ss.suppress(driver.input, key="user", timestamp="ts", suppressed=...))
    emitted = driver.step([("alice", datetime(2024, 1, 1), 1)])   # rows emitted while processing this batch
    driver.stop()

Each ``step`` runs its micro-batch to completion, including the no-data batch a moved watermark triggers, so
timers that became due fire within the step. Nothing waits on the wall clock, except ``idle(duration)``, which lets
wall-clock time pass without input (for ``idle_timeout``). On a Spark Connect session the same class works through
Connect calls only (``_connect_testing``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Union

from ._durations import Duration, to_millis
from ._jvm import facade, require_classic

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row, SparkSession
    from pyspark.sql.types import StructType


class TestDriver:
    """Feeds rows into a pipeline as one micro-batch per :meth:`step` and returns what it emitted.

    ``TestDriver(spark, schema, timestamp)`` has one input, :attr:`input`. For pipelines with several inputs
    (a join), create ``TestDriver(spark)`` and call :meth:`add_input` for each, then ``step(rows, input=name)``.
    """

    __test__ = False  # not a pytest test class

    def __new__(cls, spark: "SparkSession" = None, *args: Any, **kwargs: Any) -> "TestDriver":
        from ._connect import is_connect

        if cls is TestDriver and is_connect(spark):
            # A Connect client has no JVM to run the classic driver in: the same API over public Connect calls.
            from ._connect_testing import ConnectTestDriver

            return super().__new__(ConnectTestDriver)
        return super().__new__(cls)

    def __init__(
        self,
        spark: "SparkSession",
        schema: Union["StructType", str, None] = None,
        timestamp: Optional[str] = None,
        watermark_delay: str = "0 seconds",
    ) -> None:
        require_classic(spark)
        self._spark = spark
        self._facade = facade(spark)
        self._jdriver = self._facade.testDriver(spark._jsparkSession)
        self._schemas: Dict[str, "StructType"] = {}
        if schema is not None:
            if timestamp is None:
                raise ValueError("timestamp must name the event-time column of the input")
            self.add_input("input", schema, timestamp, watermark_delay)

    def add_input(
        self,
        name: str,
        schema: Union["StructType", str],
        timestamp: Optional[str] = None,
        watermark_delay: str = "0 seconds",
    ) -> "DataFrame":
        """Add an input stream (watermarked on ``timestamp`` unless it is None) and return it."""
        from pyspark.sql import DataFrame
        from pyspark.sql.types import StructType, _parse_datatype_string

        struct = schema if isinstance(schema, StructType) else _parse_datatype_string(schema)
        self._schemas[name] = struct
        return DataFrame(self._facade.addInput(self._jdriver, name, struct.json(), timestamp, watermark_delay), self._spark)

    @property
    def input(self) -> "DataFrame":
        """The only input stream (drivers created with a schema)."""
        from pyspark.sql import DataFrame

        return DataFrame(self._jdriver.input(), self._spark)

    @property
    def schema(self) -> "StructType":
        if len(self._schemas) != 1:
            raise ValueError(f"this driver has {len(self._schemas)} inputs; name the one you mean")
        return next(iter(self._schemas.values()))

    def start(self, pipeline: "DataFrame") -> "TestDriver":
        """Start running ``pipeline`` (computed from the inputs) with a fresh checkpoint."""
        self._jdriver.start(pipeline._jdf)
        return self

    def step(self, rows: Iterable[Any], input: Optional[str] = None) -> List["Row"]:
        """Feed ``rows`` (tuples, dicts or Rows of the input's schema) as one micro-batch to ``input`` (the only
        input by default); return the rows emitted while processing it."""
        if input is None:
            if len(self._schemas) != 1:
                raise ValueError(f"this driver has {len(self._schemas)} inputs; pass input=<name>")
            input = next(iter(self._schemas))
        if input not in self._schemas:
            raise ValueError(f"no input named {input!r}; inputs: {sorted(self._schemas)}")
        batch = self._spark.createDataFrame(list(rows), self._schemas[input])
        return self._collect(self._facade.step(self._jdriver, input, batch._jdf))

    def advance(self) -> List["Row"]:
        """Run whatever is pending (e.g. after :meth:`restart`) and return what was emitted."""
        return self._collect(self._facade.advance(self._jdriver))

    def idle(self, duration: "Duration") -> List["Row"]:
        """Let ``duration`` (a ``timedelta`` or milliseconds) of wall-clock time pass without input and return what was
        emitted meanwhile (e.g. what an ``idle_timeout`` released): waits until a micro-batch that started at least
        ``duration`` after the last one that moved the query's time (input rows or a new watermark) has completed.
        Real time passes, so keep durations small. Spark runs no micro-batch after :meth:`restart` until input
        arrives, so idling right after a restart is refused: :meth:`step` first."""
        ms = to_millis(duration, "duration")
        return self._collect(self._facade.idle(self._jdriver, ms))

    def restart(self) -> "TestDriver":
        """Stop the query and start it again from its checkpoint (state and pending input survive)."""
        self._jdriver.restart()
        return self

    def stop(self) -> None:
        self._jdriver.stop()

    @property
    def query(self):
        """The running :class:`StreamingQuery` (e.g. for :func:`spark_suppress.metrics`)."""
        from pyspark.sql.streaming import StreamingQuery

        return StreamingQuery(self._jdriver.streamingQuery())

    def _collect(self, jdf) -> List["Row"]:
        from pyspark.sql import DataFrame

        return DataFrame(jdf, self._spark).collect()

    def __enter__(self) -> "TestDriver":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
