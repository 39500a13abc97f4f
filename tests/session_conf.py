"""Settings of the Spark drivers the tests start (py4j sessions and the in-process Spark Connect servers).

The tests run thousands of one-record micro-batches, each short, on 2 cores, and `make test` is bound by CPU:

- the client JIT compiler only and the serial collector: the optimising compiler and a parallel collector spend
  more CPU on short batches than they save;
- Spark's FileSystem-based checkpoint file manager: Spark's default (FileContext) forks a shell for chmod and
  readlink for every checkpoint file it creates or renames (Hadoop without its native library), several per
  micro-batch. Its class moved in Spark 4.1.
- under it, the benchmarks' fork-free local file system (benchmarks/jvm/localfs, harness/local_fs.py), which sets
  permissions and reads links in Java: Hadoop's own, raw or not, still forks a chmod for each file it creates (about
  4 a micro-batch). Its jar is compiled once per PySpark version into target/test-support and put on the driver's
  class path (the tests run local[2]). Each test process runs one session, so the setting reaches nothing else.

The file manager and the JVM options took the conformance runner from 90 to 48 CPU-seconds (74 to 51 s) on the 15
filter-chain vectors; the fork-free file system then took `make test` from 67.1 to 58.4 minutes on 2 cores (2026-11-28).
The Scala suites get the same JIT and collector options in build.sbt and the file manager and file system in
SparkSessionSuite, except the reliability suites, which write checkpoints as users' queries do.
"""

from __future__ import annotations

import os
import sys
from typing import Dict

TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _fork_free_local_fs() -> Dict[str, str]:
    benchmarks = os.path.join(ROOT, "benchmarks")
    if benchmarks not in sys.path:
        sys.path.insert(0, benchmarks)
    from harness import local_fs

    return local_fs.fork_free_conf(os.path.join(ROOT, "target", "test-support"))


def _checkpoint_file_manager() -> str:
    import pyspark

    major, minor = (int(p) for p in pyspark.__version__.split(".")[:2])
    package = "checkpointing." if (major, minor) >= (4, 1) else ""
    return f"org.apache.spark.sql.execution.streaming.{package}FileSystemBasedCheckpointFileManager"


def quick(conf: Dict[str, str]) -> Dict[str, str]:
    """``conf`` with the settings above (the JVM options added to ``spark.driver.extraJavaOptions``)."""
    key = "spark.driver.extraJavaOptions"
    given = conf.get(key, "")
    options = given if TEST_JVM_OPTIONS in given else f"{given} {TEST_JVM_OPTIONS}".strip()
    fork_free = _fork_free_local_fs()
    classpath = [fork_free.pop("spark.driver.extraClassPath"), conf.get("spark.driver.extraClassPath")]
    return {
        "spark.sql.streaming.checkpointFileManagerClass": _checkpoint_file_manager(),
        **fork_free,
        **conf,
        key: options,
        "spark.driver.extraClassPath": os.pathsep.join(p for p in classpath if p),
    }
