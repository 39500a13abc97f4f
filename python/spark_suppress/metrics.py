"""Kafka's metrics of the spark-suppress operators in a streaming query, on either transport."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict

from . import _transport

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery


def metrics(query: "StreamingQuery") -> Dict[str, Dict[str, float]]:
    """Metrics of the spark-suppress operators in a running (or stopped) query, by operator name.

    Operators are found through the query's progress reports, so a query that has not finished a micro-batch yet
    has none. Every operator of a chain reports under its own name; a query restarted from the same DataFrame
    reports under the same names.

    Parameters
    ----------
    query : pyspark.sql.streaming.StreamingQuery
        A query started from a pipeline of spark-suppress operators (classic or Spark Connect).

    Returns
    -------
    dict
        Operator name to a dict of metric name to value; names follow Kafka's (``suppression-emit-total``,
        ``suppression-buffer-count-current``, ...).

    Raises
    ------
    RuntimeError
        On a classic session, if the process has no SparkSession (the thread's active session is used, else the
        process's default one, as PySpark's ``SparkSession.active()``).
    spark_suppress.ConnectPluginMissingError
        On a Spark Connect server without spark-suppress's plugin.

    Examples
    --------
    >>> import spark_suppress as ss
    >>> query = limited.writeStream.format("noop").start()  # doctest: +SKIP
    >>> ss.metrics(query)["users"]["suppression-emit-total"]  # doctest: +SKIP
    0.0
    """
    return _transport.of(query=query).metrics(query)
