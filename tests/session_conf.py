"""Settings of the Spark drivers the tests start (py4j sessions and the in-process Spark Connect servers).

The tests run thousands of one-record micro-batches, each short, on 2 cores, and `make test` is bound by CPU:

- the client JIT compiler only and the serial collector: the optimising compiler and a parallel collector spend
  more CPU on short batches than they save;
- Spark's FileSystem-based checkpoint file manager on Hadoop's raw local file system: Spark's default (FileContext
  over the checksummed local file system) forks a shell for chmod and readlink for every checkpoint file it creates
  or renames (Hadoop without its native library), several per micro-batch, and writes a checksum file beside each.
  Its class moved in Spark 4.1. Each test process runs one session, so the file-system setting reaches nothing else.
- Hadoop's local file system as ``ForklessLocalFileSystem`` (jvm/src/test/java), which sets permissions through
  java.nio and writes no checksum files: Hadoop's own, raw or not, forks chmod for each file it creates (about 4 a
  micro-batch). It is compiled here once per PySpark version into target/test-support and put on the driver's
  class path (the tests run local[2]).

Together the first two take the conformance runner from 90 to 48 CPU-seconds (74 to 51 s) on the 15 filter-chain
vectors; the third removes 258 of the 268 processes the JVM started for 3 join vectors.
The Scala suites get the same JIT and collector options in build.sbt and the file manager in SparkSessionSuite,
except the reliability suites, which write checkpoints as users' queries do.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from typing import Dict

TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORKLESS_SOURCE = os.path.join(
    ROOT, "jvm", "src", "test", "java", "io", "github", "sparksuppress", "testing", "ForklessLocalFileSystem.java"
)
FORKLESS_CLASS = "io.github.sparksuppress.testing.ForklessLocalFileSystem"


def _javac() -> str:
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", "javac") if home else shutil.which("javac")
    if not found or not os.path.exists(found):
        raise RuntimeError("the tests compile a test class with javac: install a JDK 17+ (not only a JRE)")
    return found


def forkless_classes() -> str:
    """The folder holding ForklessLocalFileSystem compiled against this PySpark's jars (compiled on first use; the
    suites of one line that start at once each compile into a folder of their own and the first to finish wins)."""
    import pyspark

    out = os.path.join(ROOT, "target", "test-support", f"pyspark-{pyspark.__version__}")
    marker = os.path.join(out, *FORKLESS_CLASS.split(".")) + ".class"
    if os.path.exists(marker) and os.path.getmtime(marker) >= os.path.getmtime(FORKLESS_SOURCE):
        return out
    os.makedirs(os.path.dirname(out), exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="forkless-", dir=os.path.dirname(out))
    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    classpath = os.pathsep.join(glob.glob(os.path.join(jars, "hadoop-client-api-*.jar"))) or os.path.join(jars, "*")
    subprocess.run([_javac(), "-nowarn", "-cp", classpath, "-d", scratch, FORKLESS_SOURCE], check=True)
    shutil.rmtree(out, ignore_errors=True)
    try:
        os.rename(scratch, out)
    except OSError:  # another suite's compile got there first
        shutil.rmtree(scratch, ignore_errors=True)
    return out


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
    classpath = os.pathsep.join(p for p in (forkless_classes(), conf.get("spark.driver.extraClassPath")) if p)
    return {
        "spark.sql.streaming.checkpointFileManagerClass": _checkpoint_file_manager(),
        "spark.hadoop.fs.file.impl": FORKLESS_CLASS,
        **conf,
        key: options,
        "spark.driver.extraClassPath": classpath,
    }
