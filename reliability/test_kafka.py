"""End to end against a real Apache Kafka broker: events topic in, suppress, results topic out, across a restart.

The broker (Kafka 3.9.2, KRaft mode: one process is both controller and broker) runs from the distribution's jars,
fetched from Maven Central with Maven into target/reliability/kafka/, and listens on loopback only. Spark reads and
writes Kafka through its Kafka connector, which has no 4.3.0 release on Maven Central: the 4.2.0 connector runs on
Spark 4.3 here (see reliability/kafka/connector-pom.xml for the exact substitutions and why).
"""

import os

import local_kafka
import pytest
from conftest import SCRIPTS, python_env, result_of, run, spark_submit


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    try:
        with local_kafka.broker(str(tmp_path_factory.mktemp("kafka"))) as bootstrap:
            yield bootstrap
    except local_kafka.KafkaSetupError as e:
        pytest.fail(str(e))


def test_suppress_between_kafka_topics_survives_a_restart(broker, jar, tmp_path):
    connector = local_kafka.connector_jars()
    jars = ",".join([jar] + connector)
    work = str(tmp_path / "work")

    def submit(phase: str):
        return run(
            [
                spark_submit(),
                "--master",
                "local[2]",
                "--jars",
                jars,
                os.path.join(SCRIPTS, "kafka_pipeline.py"),
                broker,
                work,
                phase,
            ],
            timeout=900,
            env_extra=python_env(),
        )

    first = submit("first")
    assert result_of(first)["ok"] and first.returncode == 0
    second = submit("second")  # a new process: the query restarts from the checkpoint
    result = result_of(second)
    assert result["got"] == result["expected"], result
    assert second.returncode == 0
