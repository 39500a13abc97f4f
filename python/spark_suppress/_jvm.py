"""The py4j transport: classic sessions reach the operators through the one JVM facade.

Each operator's public function (``suppress.py``, ``aggregate.py``, ``join.py``) builds its spec message once and the
dispatcher (``_transport``) hands it here or to ``_connect``; both take the same arguments and return DataFrames.
Here the message crosses py4j as its serialized bytes (a Java ``byte[]``), the bytes Spark Connect carries too.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from . import _jars
from ._pyspark import classic_column, is_connect
from .errors import ClassicSessionRequiredError, JarNotFoundError, VersionMismatchError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery
    from pyspark.sql.types import StructType

    from .proto.spec_pb2 import AggregateSpec, AggregateWindowedSpec, JoinVersionedSpec, SuppressSpec

FACADE_CLASS = "io.github.sparksuppress.wire.WireFacade"


def require_classic(obj: Any) -> None:
    """Raise a clear error for Spark Connect sessions and DataFrames, which have no JVM in this process."""
    if is_connect(obj):
        raise ClassicSessionRequiredError(
            "this spark_suppress call needs a classic PySpark session (it reaches the JVM through py4j, and a "
            "Spark Connect client has no JVM). The operators, metrics and TestDriver also work on Spark Connect "
            "sessions whose server has spark-suppress's plugin (docs/connect.md); for py4j create the session with "
            "spark_suppress.configure(SparkSession.builder).getOrCreate() without .remote(...) or SPARK_REMOTE."
        )


# Each gateway's facade class, kept once its JVM was checked for the jar and its version: once per JVM, not per call.
# Resolving ``jvm.io.github...`` asks the JVM about every name on the way (is ``io`` a class? in which imported
# package?), each a class lookup that scans Spark's few hundred jars and fails, so the class is resolved once.
_facades: Dict[int, Tuple[Any, Any]] = {}


def facade(spark: "SparkSession") -> Any:
    """The JVM facade object for ``spark``, after checking that the jar is there and has this version."""
    require_classic(spark)
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    gateway = spark.sparkContext._gateway
    cached = _facades.get(id(gateway))
    if cached is not None and cached[0] is gateway:
        return cached[1]
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    try:
        jvm.java.lang.Class.forName(FACADE_CLASS, True, loader)
    except Exception as e:  # py4j raises Py4JJavaError wrapping ClassNotFoundException
        if "ClassNotFoundException" not in str(e) and "NoClassDefFoundError" not in str(e):
            raise
        raise JarNotFoundError(
            "spark-suppress's classes are not on this Spark session's JVM classpath. Start the session with "
            "the jar: spark = spark_suppress.configure(SparkSession.builder).getOrCreate() (before any other "
            "SparkSession is created in this process), or spark-submit --jars "
            f"{_jars.jar_hint()}, or set spark.jars to that path."
        ) from None
    cls = _facade_class(jvm)
    jar_version = cls.version()
    if jar_version != _jars.__version__:
        raise VersionMismatchError(
            f"the spark-suppress jar on the JVM classpath is version {jar_version}, but the Python package "
            f"is version {_jars.__version__}. Put the matching jar on the classpath (spark_suppress.jar_path() "
            "gives the bundled one) or install the spark-suppress wheel of the jar's version."
        )
    cls.checkRuntime()
    # The gateway is kept beside its facade: a new gateway (a new JVM) at the same id is then not taken for it.
    _facades[id(gateway)] = (gateway, cls)
    return cls


def _facade_class(jvm: Any) -> Any:
    return jvm.io.github.sparksuppress.wire.WireFacade


def dataframe(jdf: Any, spark: "SparkSession") -> "DataFrame":
    """A classic DataFrame around a JVM Dataset."""
    from pyspark.sql import DataFrame

    return DataFrame(jdf, spark)


def _java_columns(spark: "SparkSession", columns: Sequence["Column"]) -> Any:
    jcolumns = spark.sparkContext._jvm.java.util.ArrayList()  # type: ignore[union-attr]
    for c in columns:
        if is_connect(c):
            raise TypeError(
                f"aggregations must be classic columns for a classic DataFrame, got the Connect column {c!r}"
            )
        jcolumns.add(c._jc)
    return jcolumns


def suppress(df: "DataFrame", spec: "SuppressSpec") -> "DataFrame":
    return dataframe(facade(df.sparkSession).suppress(df._jdf, spec.SerializeToString()), df.sparkSession)


def aggregate_windowed(df: "DataFrame", spec: "AggregateWindowedSpec", aggregations: Sequence["Column"]) -> "DataFrame":
    spark = df.sparkSession
    jdf = facade(spark).aggregateWindowed(df._jdf, spec.SerializeToString(), _java_columns(spark, aggregations))
    return dataframe(jdf, spark)


def aggregate(df: "DataFrame", spec: "AggregateSpec", aggregations: Sequence["Column"]) -> "DataFrame":
    spark = df.sparkSession
    jdf = facade(spark).aggregate(df._jdf, spec.SerializeToString(), _java_columns(spark, aggregations))
    return dataframe(jdf, spark)


def join_versioned(
    stream_df: "DataFrame", table_df: "DataFrame", initial_versions: Optional["DataFrame"], spec: "JoinVersionedSpec"
) -> "DataFrame":
    spark = stream_df.sparkSession
    initial = None if initial_versions is None else initial_versions._jdf
    jdf = facade(spark).joinVersioned(stream_df._jdf, table_df._jdf, initial, spec.SerializeToString())
    return dataframe(jdf, spark)


def session_of_this_thread(what: str) -> "SparkSession":
    """The session a call without a DataFrame uses: the thread's active one, else the process's default one.

    PySpark's own ``SparkSession.active()``: a thread that created no session (a worker thread) has no active one,
    and PySpark's functions work there too. Raises a clear ``RuntimeError`` when the process has no session at all.
    """
    from pyspark.errors import PySparkRuntimeError
    from pyspark.sql import SparkSession

    try:
        return SparkSession.active()
    except PySparkRuntimeError:
        raise RuntimeError(
            f"{what} needs a SparkSession, and this process has none (none is active in this thread and none was "
            "created): create one first, e.g. spark_suppress.configure(SparkSession.builder).getOrCreate()"
        ) from None


def string_fold(column: "Column", initial: str, separator: str) -> "Column":
    spark = session_of_this_thread("string_fold")
    return classic_column(facade(spark).stringFold(column._jc, initial, separator))


def latest(column: "Column", order_by: Optional["Column"]) -> "Column":
    from pyspark.sql import functions as F

    return F.call_function(_jars.LATEST_FUNCTION, *[c for c in (column, order_by) if c is not None])


def metrics(query: "StreamingQuery") -> Dict[str, Dict[str, float]]:
    spark = session_of_this_thread("metrics(query)")
    result: Dict[str, Dict[str, float]] = json.loads(facade(spark).metrics(query._jsq))
    return result


class Driver:
    """The test driver on the JVM (MemoryStream in, foreachBatch out), one micro-batch per step."""

    def __init__(self, spark: "SparkSession") -> None:
        self._spark = spark
        self._facade = facade(spark)
        self._jdriver = self._facade.testDriver(spark._jsparkSession)

    def parse_schema(self, ddl: str) -> "StructType":
        from pyspark.sql.types import StructType, _parse_datatype_string

        struct = _parse_datatype_string(ddl)
        assert isinstance(struct, StructType)
        return struct

    def add_input(self, name: str, schema: "StructType", timestamp: Optional[str], watermark_delay: str) -> "DataFrame":
        jdf = self._facade.addInput(self._jdriver, name, schema.json(), timestamp, watermark_delay)
        return dataframe(jdf, self._spark)

    def input(self) -> "DataFrame":
        return dataframe(self._jdriver.input(), self._spark)

    def start(self, pipeline: "DataFrame") -> None:
        self._jdriver.start(pipeline._jdf)

    def step(self, input: str, schema: "StructType", rows: List[Any]) -> List[Any]:
        return self._collect(self._facade.step(self._jdriver, input, _pickled_rows(schema, rows)))

    def advance(self) -> List[Any]:
        return self._collect(self._facade.advance(self._jdriver))

    def idle(self, ms: int) -> List[Any]:
        return self._collect(self._facade.idle(self._jdriver, ms))

    def restart(self) -> None:
        self._jdriver.restart()

    def stop(self) -> None:
        self._jdriver.stop()

    def query(self) -> "StreamingQuery":
        from pyspark.sql.streaming import StreamingQuery

        return StreamingQuery(self._jdriver.streamingQuery())

    def _collect(self, jdf: Any) -> List[Any]:
        return dataframe(jdf, self._spark).collect()


def _pickled_rows(schema: "StructType", rows: List[Any]) -> bytes:
    """``rows`` (checked by ``TestDriver.step``) in Spark's internal form, as ``createDataFrame(rows, schema)`` turns
    them, pickled as PySpark pickles rows for the JVM: one py4j argument. A DataFrame of them would cost the JVM a
    Spark job, and a Python worker, to collect for every step."""
    import pickle

    from pyspark.serializers import pickle_protocol
    from pyspark.sql.types import _create_converter

    convert = _create_converter(schema)
    return pickle.dumps([schema.toInternal(convert(row)) for row in rows], pickle_protocol)
