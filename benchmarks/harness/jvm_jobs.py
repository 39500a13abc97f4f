"""Hand-written JVM jobs the benchmarks measure spark-suppress's engine against (``benchmarks/jvm/jobs``): what a
user would write with ``flatMapGroupsWithState`` directly, with none of Kafka's rules. Their jar is on the driver's
class path of every benchmark session (``streaming.session``)."""

from __future__ import annotations

import os

from . import javac
from .local_fs import ROOT, WORK_DIR

SOURCES = os.path.join(ROOT, "benchmarks", "jvm", "jobs")


def jar(work_dir: str = WORK_DIR) -> str:
    """The jobs' jar for the running PySpark (javac.jar)."""
    return javac.jar(SOURCES, "jvm-jobs", work_dir)


def window_counts(events, window_ms: int):
    """Final counts per ``key`` and tumbling window of ``window_ms`` over ``ts`` (``events`` watermarked), by
    ``BareWindowCount``: ``key, window_start, window_end, count``."""
    from pyspark.sql import DataFrame

    spark = events.sparkSession
    jdf = spark._jvm.io.github.sparksuppress.bench.jobs.BareWindowCount.counts(events._jdf, "key", "ts", window_ms)
    return DataFrame(jdf, spark)
