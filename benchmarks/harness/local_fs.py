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

import glob
import hashlib
import os
import subprocess
import tempfile
import zipfile
from typing import Dict

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


def _sources():
    return sorted(glob.glob(os.path.join(SOURCES, "**", "*.java"), recursive=True))


def jar(work_dir: str = WORK_DIR) -> str:
    """The fork-free file system's jar for the running PySpark, compiled once per source and PySpark version."""
    import pyspark

    spark_jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    digest = hashlib.sha256(pyspark.__version__.encode())
    for path in _sources():
        with open(path, "rb") as fh:
            digest.update(fh.read())
    out = os.path.join(work_dir, "localfs", f"fork-free-local-fs-{pyspark.__version__}-{digest.hexdigest()[:12]}.jar")
    if os.path.exists(out):
        return out
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with tempfile.TemporaryDirectory() as classes:
        result = subprocess.run(
            ["javac", "-nowarn", "-d", classes, "-cp", os.path.join(spark_jars, "*"), *_sources()],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise RuntimeError(f"javac could not compile {SOURCES} against {spark_jars}:\n{result.stderr}")
        # A name of its own: several processes (the tests' suites) may compile the same jar at once.
        fd, partial = tempfile.mkstemp(suffix=".tmp", dir=os.path.dirname(out))
        os.close(fd)
        with zipfile.ZipFile(partial, "w") as z:
            for path in glob.glob(os.path.join(classes, "**", "*.class"), recursive=True):
                z.write(path, os.path.relpath(path, classes))
        os.replace(partial, out)
    return out


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
