"""End to end against a real Apache Kafka broker: events topic in, suppress, results topic out, across a restart.

The broker (Kafka 3.9.2, KRaft mode: one process is both controller and broker) runs from the distribution's jars,
fetched from Maven Central with Maven into target/reliability/kafka/, and listens on loopback only. Spark reads and
writes Kafka through its Kafka connector, which has no 4.3.0 release on Maven Central: the 4.2.0 connector runs on
Spark 4.3 here (see reliability/kafka/connector-pom.xml for the exact substitutions and why).
"""

import base64
import glob
import os
import socket
import subprocess
import time
import uuid

import pytest

from conftest import ROOT, SCRIPTS, python_env, result_of, run, spark_submit

KAFKA_DIR = os.path.join(ROOT, "target", "reliability", "kafka")
POMS = os.path.join(ROOT, "reliability", "kafka")


def fetch(pom: str, into: str, extra=()) -> list:
    if not glob.glob(os.path.join(into, "*.jar")):
        proc = run(["mvn", "-B", "-q", "-s", os.path.join(POMS, "settings.xml"), "-f", os.path.join(POMS, pom),
                    "dependency:copy-dependencies", f"-DoutputDirectory={into}", *extra], timeout=900)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return sorted(glob.glob(os.path.join(into, "*.jar")))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, log: str, seconds: int = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the broker exited with {process.returncode}:\n{open(log).read()[-4000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"the broker did not listen on 127.0.0.1:{port} within {seconds} s:\n{open(log).read()[-4000:]}")


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    jars = fetch("broker-pom.xml", os.path.join(KAFKA_DIR, "broker"))
    work = tmp_path_factory.mktemp("kafka")
    port, controller = free_port(), free_port()
    config = work / "server.properties"
    config.write_text("\n".join([
        "process.roles=broker,controller",
        "node.id=1",
        f"controller.quorum.voters=1@127.0.0.1:{controller}",
        f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}",
        f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names=CONTROLLER",
        "inter.broker.listener.name=PLAINTEXT",
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        f"log.dirs={work / 'data'}",
        "num.partitions=1",
        "offsets.topic.replication.factor=1",
        "transaction.state.log.replication.factor=1",
        "transaction.state.log.min.isr=1",
        "group.initial.rebalance.delay.ms=0",
        "auto.create.topics.enable=true",
    ]) + "\n")
    classpath = os.pathsep.join(jars)
    java = ["java", "-Xmx512m", "-cp", classpath]
    cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    formatted = run(java + ["kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", str(config)], timeout=300)
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr
    log = str(work / "broker.log")
    with open(log, "w") as out:
        process = subprocess.Popen(java + ["kafka.Kafka", str(config)], stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, process, log)
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()


def test_suppress_between_kafka_topics_survives_a_restart(broker, jar, tmp_path):
    connector = fetch("connector-pom.xml", os.path.join(KAFKA_DIR, "connector"), extra=(
        "-DincludeScope=runtime",
        "-DincludeArtifactIds=spark-sql-kafka-0-10_2.13,spark-token-provider-kafka-0-10_2.13,kafka-clients,commons-pool2"))
    jars = ",".join([jar] + connector)
    work = str(tmp_path / "work")

    def submit(phase: str):
        return run([spark_submit(), "--master", "local[2]", "--jars", jars,
                    os.path.join(SCRIPTS, "kafka_pipeline.py"), broker, work, phase],
                   timeout=900, env_extra=python_env())

    first = submit("first")
    assert result_of(first)["ok"] and first.returncode == 0
    second = submit("second")  # a new process: the query restarts from the checkpoint
    result = result_of(second)
    assert result["got"] == result["expected"], result
    assert second.returncode == 0
