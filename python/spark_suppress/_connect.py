"""The Spark Connect transport: the operators' specs travel to the server's relation plugin as protobuf messages.

Each operator builds its spec message once (``suppress.py``, ``aggregate.py``, ``join.py``) and the dispatcher
(``_transport``) hands it either to the py4j facade (``_jvm``) or to this module, which wraps the spec's bytes and the
input DataFrames' plans in a relation extension. On the server,
``io.github.sparksuppress.connect.SparkSuppressRelationPlugin`` turns it back into DataFrames and calls the same
facade entry points with the same bytes, so decoding and validation happen in one place (docs/connect.md).

Nothing here imports ``pyspark.sql.classic``: the module runs with the ``pyspark-client`` package alone.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence, cast

from . import _jars
from ._jars import EXPRESSION_PLUGIN, EXPRESSION_SETTING, RELATION_PLUGIN, RELATION_SETTING
from ._pyspark import is_connect
from .errors import ConnectPluginMissingError, VersionMismatchError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.streaming import StreamingQuery

    from .proto.spec_pb2 import AggregateSpec, AggregateWindowedSpec, JoinVersionedSpec, SuppressSpec

# The JVM's prefix for a client/server version mismatch (ConnectSupport.VersionMismatchPrefix).
_VERSION_MISMATCH = "spark-suppress version mismatch:"
_STRING_FOLD_TYPE = b"spark_suppress.connect.StringFold"
# What Spark's planner says about an extension no registered plugin accepts.
_NO_HANDLER = "No handler found for extension"


def _message(name: str, **fields: Any) -> Any:
    from .proto import connect_pb2

    return getattr(connect_pb2, name)(client_version=_jars.__version__, **fields)


def _relation_bytes(df: Any) -> bytes:
    # A Spark Connect DataFrame: its plan and client are not on the classic DataFrame type it is annotated as.
    planned: bytes = df._plan.plan(df._session.client).SerializeToString()
    return planned


def _extension_plan(message: Any, children: Sequence[Any]) -> Any:
    from pyspark.sql.connect.plan import LogicalPlan

    class SparkSuppressRelation(LogicalPlan):
        """A relation extension around one spark-suppress message; its inputs are serialized when it is planned."""

        def __init__(self) -> None:
            super().__init__(None)

        def plan(self, session: Any) -> Any:
            rel = self._create_proto_relation()
            rel.extension.Pack(message)
            return rel

        @property
        def observations(self) -> Dict[str, Any]:
            merged: Dict[str, Any] = {}
            for c in children:
                merged.update(c._plan.observations)
            return merged

        def __repr__(self) -> str:
            return f"SparkSuppressRelation({type(message).__name__})"

    return SparkSuppressRelation()


def _dataframe(plan: Any, session: Any) -> "DataFrame":
    """A Connect DataFrame of ``plan``: PySpark 3.5's client builds one with ``DataFrame.withPlan``, 4.0's with the
    constructor."""
    from pyspark.sql.connect.dataframe import DataFrame

    with_plan = getattr(DataFrame, "withPlan", None)
    return with_plan(plan, session) if with_plan is not None else DataFrame(plan, session)


def _frame(message: Any, children: Sequence["DataFrame"], session: Any, folds: bool = False) -> "DataFrame":
    df = _dataframe(_extension_plan(message, children), session)
    # Analysing now makes the server build the operator, so bad arguments fail here, as with py4j, and not only
    # when the query starts.
    try:
        with translated_errors():
            df.schema
    except ConnectPluginMissingError as e:
        # Spark 4.0's server names no extension type in "No handler found for extension": with a string_fold among
        # the aggregations, the plugin missing is the expression one when the relation plugin answers.
        if folds and not e.expression and _relation_plugin_answers(session):
            raise ConnectPluginMissingError(missing_plugin_message(expression=True), expression=True) from e
        raise
    return df


def _relation_plugin_answers(session: Any) -> bool:
    try:
        _dataframe(_extension_plan(_message("Metrics", observation_names=[]), []), session).schema
        return True
    except Exception:
        return False


@contextmanager
def translated_errors() -> Iterator[None]:
    """Turns the server's "no plugin" and version errors into this package's errors; passes every other one on
    unchanged (validation errors stay PySpark's IllegalArgumentException with the JVM's message)."""
    try:
        yield
    except Exception as e:
        text = str(e)
        if _NO_HANDLER in text:
            expression = "StringFold" in text
            raise ConnectPluginMissingError(missing_plugin_message(expression), expression=expression) from e
        if _VERSION_MISMATCH in text:
            start = text.index(_VERSION_MISMATCH)
            raise VersionMismatchError(text[start:].splitlines()[0]) from e
        raise


def missing_plugin_message(expression: bool = False) -> str:
    setting = f"{EXPRESSION_SETTING}={EXPRESSION_PLUGIN}" if expression else f"{RELATION_SETTING}={RELATION_PLUGIN}"
    what = (
        "string_fold needs spark-suppress's expression plugin"
        if expression
        else "spark-suppress's operators need its relation plugin"
    )
    return (
        f"the Spark Connect server cannot run this: {what}, which the server was not started with. Start the server "
        f"with --jars {_jars.jar_hint()} --conf {setting} (spark_suppress.connect_server_conf() lists every setting), "
        "or for a local server create the session with "
        "spark_suppress.configure(SparkSession.builder.remote('local[2]')).getOrCreate()."
    )


def suppress(df: "DataFrame", spec: "SuppressSpec") -> "DataFrame":
    message = _message("Suppress", input=_relation_bytes(df), spec=spec.SerializeToString())
    return _frame(message, [df], df._session)


def aggregate_windowed(df: "DataFrame", spec: "AggregateWindowedSpec", aggregations: Sequence["Column"]) -> "DataFrame":
    return _aggregating("AggregateWindowed", df, spec, aggregations)


def aggregate(df: "DataFrame", spec: "AggregateSpec", aggregations: Sequence["Column"]) -> "DataFrame":
    return _aggregating("Aggregate", df, spec, aggregations)


def _aggregating(kind: str, df: "DataFrame", spec: Any, aggregations: Sequence["Column"]) -> "DataFrame":
    for a in aggregations:
        if not is_connect(a):
            raise TypeError(
                "aggregations must be Spark Connect columns for a Spark Connect DataFrame, got the classic column "
                f"{a!r}"
            )
    client = df._session.client
    planned = [cast(Any, a)._expr.to_plan(client).SerializeToString() for a in aggregations]
    message = _message(kind, input=_relation_bytes(df), aggregations=planned, spec=spec.SerializeToString())
    # A string_fold anywhere in an aggregation carries its message's type name (packed as an Any).
    folds = any(_STRING_FOLD_TYPE in p for p in planned)
    return _frame(message, [df], df._session, folds=folds)


def join_versioned(
    stream_df: "DataFrame", table_df: "DataFrame", initial_versions: Optional["DataFrame"], spec: "JoinVersionedSpec"
) -> "DataFrame":
    frames = [stream_df, table_df] + ([initial_versions] if initial_versions is not None else [])
    message = _message(
        "JoinVersioned",
        stream=_relation_bytes(stream_df),
        table=_relation_bytes(table_df),
        initial_versions=b"" if initial_versions is None else _relation_bytes(initial_versions),
        spec=spec.SerializeToString(),
    )
    return _frame(message, frames, stream_df._session)


def string_fold(column: "Column", initial: str, separator: str) -> "Column":
    from pyspark.sql.connect.column import Column
    from pyspark.sql.connect.expressions import Expression

    from .proto import connect_pb2

    child = cast(Any, column)._expr

    class StringFoldExpression(Expression):
        """An expression extension the server's StringFoldExpressionPlugin turns into the StringFold aggregate."""

        def to_plan(self, session: Any) -> Any:
            # PySpark 4.0's expressions start from _create_proto_expression (which records their origin); 3.5's
            # from an empty message.
            create = getattr(self, "_create_proto_expression", None)
            if create is not None:
                expr = create()
            else:
                from pyspark.sql.connect.proto import Expression as ProtoExpression

                expr = ProtoExpression()
            expr.extension.Pack(
                connect_pb2.StringFold(
                    column=child.to_plan(session).SerializeToString(), initial=initial, separator=separator
                )
            )
            return expr

        @property
        def children(self) -> Sequence[Any]:
            return [child]

        def __repr__(self) -> str:
            return f"string_fold({child!r}, {initial!r}, {separator!r})"

    return Column(StringFoldExpression())


def latest(column: "Column", order_by: Optional["Column"]) -> "Column":
    from pyspark.sql.connect import functions as CF

    result: "Column" = CF.call_function(_jars.LATEST_FUNCTION, *[c for c in (column, order_by) if c is not None])
    return result


def progress_field(report: Any, name: str) -> Any:
    """A field of a streaming progress report: a plain dict of the JSON on PySpark 3.5's Connect client, an object
    with attributes from 4.0 (a dict subclass whose keys do not hold the computed fields, e.g. numInputRows)."""
    if type(report) is not dict:
        return getattr(report, name)
    if name == "numInputRows" and name not in report:
        # 3.5's JSON has only each source's count; the total is their sum, as Spark's own progress computes it.
        return sum(source.get("numInputRows", 0) for source in report.get("sources", []))
    return report.get(name)


def metrics(query: "StreamingQuery") -> Dict[str, Dict[str, float]]:
    names: List[str] = []
    for progress in query.recentProgress:
        for name in progress_field(progress, "observedMetrics") or {}:
            if name not in names:
                names.append(name)
    session = cast(Any, query)._session
    message = _message("Metrics", observation_names=names)
    with translated_errors():
        rows = _dataframe(_extension_plan(message, []), session).collect()
    return json.loads(rows[0][0])
