"""Which state file of a failed query's checkpoint is damaged, and whose state it is (docs/reliability.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery


def explain_state_failure(query: "StreamingQuery") -> Optional[str]:
    """Why ``query`` failed, if it failed loading state from a damaged checkpoint file.

    Spark's error for a state file it cannot read (``CANNOT_LOAD_STATE_STORE.UNCATEGORIZED`` on Spark 4, the bare
    ``EOFException`` or LZ4 ``IOException`` on 3.5) names neither the file nor the operator. This reads the query's
    state files as Spark's HDFS-backed state store does and names each one that does not read, with the spark-suppress
    operator whose state it holds and what to do.

    Parameters
    ----------
    query : pyspark.sql.streaming.StreamingQuery
        A query of a classic session that has terminated (``awaitTermination`` raised).

    Returns
    -------
    str or None
        The explanation, or None if the query did not fail loading state or every state file reads.

    Raises
    ------
    RuntimeError
        If the process has no SparkSession (the thread's active session is used, else the process's default one).
    spark_suppress.ClassicSessionRequiredError
        For a Spark Connect query: the files are read on the driver's JVM, which a Connect client does not have.
    spark_suppress.JarNotFoundError
        If the session's JVM does not have spark-suppress's jar.

    Examples
    --------
    >>> try:  # doctest: +SKIP
    ...     query.awaitTermination()
    ... except StreamingQueryException:
    ...     print(ss.explain_state_failure(query))
    ...     raise
    """
    # Classic PySpark and py4j only once called: importing the package loads neither.
    from ._jvm import facade, require_classic, session_of_this_thread

    require_classic(query)
    spark = session_of_this_thread("explain_state_failure")
    facade(spark)
    found = spark.sparkContext._jvm.io.github.sparksuppress.api.StateCheck.explain(query._jsq)  # type: ignore
    return found.get() if found.isDefined() else None
