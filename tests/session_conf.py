"""Settings of the Spark drivers the tests start (py4j sessions and the in-process Spark Connect servers).

The tests run thousands of one-record micro-batches, each short, on 2 cores, and `make test` is bound by CPU:

- the client JIT compiler only and the serial collector: the optimising compiler and a parallel collector spend
  more CPU on short batches than they save;
- Spark's FileSystem-based checkpoint file manager on Hadoop's raw local file system: Spark's default (FileContext
  over the checksummed local file system) forks a shell for chmod and readlink for every checkpoint file it creates
  or renames (Hadoop without its native library), several per micro-batch, and writes a checksum file beside each.
  Its class moved in Spark 4.1. Each test process runs one session, so the file-system setting reaches nothing else.

Together they take the conformance runner from 90 to 48 CPU-seconds (74 to 51 s) on the 15 filter-chain vectors.
The Scala suites get the same JIT and collector options in build.sbt and the file manager in SparkSessionSuite,
except the reliability suites, which write checkpoints as users' queries do.
"""

from __future__ import annotations

from typing import Dict

TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


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
    return {
        "spark.sql.streaming.checkpointFileManagerClass": _checkpoint_file_manager(),
        "spark.hadoop.fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
        **conf,
        key: options,
    }
