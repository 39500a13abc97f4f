"""Delta Lake's jars for the Spark line under test, fetched from Maven Central with Maven into
target/reliability/delta/ (test-only: never in the published jar or wheel; reliability/kafka/delta-pom.xml).

Delta publishes its Spark connector per Spark line (``io.delta:delta-spark_<line>_2.13``). There is none for Spark
4.3: ``Could not find artifact io.delta:delta-spark_4.3_2.13:jar:4.4.0 in central-only`` (checked 2026-11-26; the
newest release, 4.4.0, is built for Spark 4.2; PyPI's newest delta-spark, 4.4.1, requires ``pyspark<=4.2.0,>=4.0.1``
and asks for ``io.delta:delta-spark_<line>_2.13:4.4.1``, which Maven Central does not have, so its jars come from
Maven Central's 4.4.0 here). The 4.2 build on
Spark 4.3 writes a table but cannot read one: ``java.lang.NoSuchMethodError: 'void
org.apache.spark.sql.execution.LogicalRDD.<init>(scala.collection.immutable.Seq, org.apache.spark.rdd.RDD, ...,
org.apache.spark.sql.classic.SparkSession, scala.Option, scala.Option)'``. So the Delta check runs on the 4.2 line
(``make reliability`` runs it with the 4.2 venv; docs/reliability.md).
"""

from __future__ import annotations

import os
from typing import List, Optional, Tuple

from local_kafka import KAFKA_DIR, fetch

# The newest Delta release of each Spark line on Maven Central (the artifact's own POM names the Spark it is built on).
RELEASES = {
    "4.0": ("delta-spark_4.0_2.13", "4.4.0"),
    "4.1": ("delta-spark_4.1_2.13", "4.4.0"),
    "4.2": ("delta-spark_4.2_2.13", "4.4.0"),
}
DELTA_DIR = os.path.join(os.path.dirname(KAFKA_DIR), "delta")


def release(line: str) -> Optional[Tuple[str, str]]:
    return RELEASES.get(line)


def jars(line: str) -> List[str]:
    """Delta's Spark connector and its storage layer (Spark provides the rest of what it needs)."""
    artifact, version = RELEASES[line]
    return fetch(
        "delta-pom.xml",
        os.path.join(DELTA_DIR, f"{artifact}-{version}"),
        (
            f"-Ddelta.artifact={artifact}",
            f"-Ddelta.version={version}",
            "-DincludeScope=runtime",
            f"-DincludeArtifactIds={artifact},delta-storage",
        ),
    )
