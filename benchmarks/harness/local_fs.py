"""Which local file system the benchmarks' Spark systems write their checkpoints and outputs through.

``BENCH_LOCAL_FS`` (``run.py --local-fs``) chooses it for every Spark system of a run alike, the harness's session and
the spark-submit jobs through Kafka:

- ``forkfree`` (the default): Hadoop's local file system with its ``chmod`` and ``readlink`` calls made in Java
  (``benchmarks/jvm/localfs``), as Spark on HDFS, on an object store or with Hadoop's native library makes them. The
  jar is compiled here with ``javac`` against the running PySpark's own jars (each Spark line its own Hadoop) and
  cached in the work directory.
- ``hadoop``: Hadoop's own, as PySpark ships it. Without Hadoop's native library (PySpark's wheels ship none) it starts
  a ``chmod`` process for every file it creates and a ``readlink`` process for both paths of every rename: about 1,250
  processes in one run of benchmark 1, each a few milliseconds on the benchmark machine, on the driver's micro-batch
  path (offset and commit logs, the file sink's log) and in every state store's commit. They took about half of each
  Spark system's time there and hid what the operators cost (benchmarks/README.md).
"""

from __future__ import annotations

import os
from typing import Dict

from . import javac

FORK_FREE = "forkfree"
HADOOP = "hadoop"
CHOICES = (FORK_FREE, HADOOP)
DEFAULT = FORK_FREE
ENV = "BENCH_LOCAL_FS"

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCES = os.path.join(ROOT, "benchmarks", "jvm", "localfs")
WORK_DIR = os.path.join(ROOT, "benchmarks", "work")  # run.py's default --work-dir
PACKAGE = "io.github.sparksuppress.bench.fs"


def mode() -> str:
    """The run's choice, from ``BENCH_LOCAL_FS`` (default ``forkfree``); anything else is refused."""
    value = os.environ.get(ENV) or DEFAULT
    if value not in CHOICES:
        raise ValueError(f"{ENV}={value!r}: use one of {', '.join(CHOICES)} (default {DEFAULT})")
    return value


def jar(work_dir: str = WORK_DIR) -> str:
    """The fork-free file system's jar for the running PySpark (javac.jar)."""
    return javac.jar(SOURCES, "fork-free-local-fs", work_dir)


def conf(work_dir: str = WORK_DIR) -> Dict[str, str]:
    """Spark settings that put the run's file system in place (none for Hadoop's own). They must be set before the
    driver JVM starts: its class path."""
    return {} if mode() == HADOOP else fork_free_conf(work_dir)


def fork_free_conf(work_dir: str = WORK_DIR) -> Dict[str, str]:
    """The settings of the fork-free file system whatever the run's choice (the tests' quick checkpoints use it)."""
    return {
        "spark.driver.extraClassPath": jar(work_dir),
        "spark.hadoop.fs.file.impl": f"{PACKAGE}.ForkFreeLocalFileSystem",
        "spark.hadoop.fs.AbstractFileSystem.file.impl": f"{PACKAGE}.ForkFreeLocalFs",
    }
