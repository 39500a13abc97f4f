"""The JVM options of the Spark drivers the tests start: py4j sessions and the in-process Spark Connect servers.

The tests run thousands of one-record micro-batches, each short: the optimising JIT compiler and a parallel garbage
collector spend more CPU on them than they save. With the client compiler only and the serial collector, the
conformance runner takes about a quarter less CPU (measured on 15 chain vectors: 90 -> 67 CPU-seconds), and
`make test` on 2 cores is bound by CPU. The Scala suites' forked JVMs get the same options in build.sbt.
"""

from __future__ import annotations

from typing import Dict

TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def with_test_jvm(conf: Dict[str, str]) -> Dict[str, str]:
    """``conf`` with the test JVM options added to the driver's ``spark.driver.extraJavaOptions``."""
    key = "spark.driver.extraJavaOptions"
    given = conf.get(key, "")
    if TEST_JVM_OPTIONS in given:
        return dict(conf)
    return {**conf, key: f"{given} {TEST_JVM_OPTIONS}".strip()}
