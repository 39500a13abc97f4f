"""A single-node Apache Kafka (KRaft: one process is controller and broker) on loopback, and Spark's Kafka connector
jars, both fetched from Maven Central with Maven (reliability/kafka/*.xml say which and why). Shared by
reliability/test_kafka.py and the benchmarks (benchmarks/harness/kafka_streams.py); raises on failure, so each
caller reports it its own way.
"""

from __future__ import annotations

import base64
import glob
import os
import socket
import subprocess
import time
import uuid
from contextlib import contextmanager
from typing import Iterator, List, Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POMS = os.path.join(ROOT, "reliability", "kafka")
KAFKA_DIR = os.path.join(ROOT, "target", "reliability", "kafka")
CONNECTOR_ARTIFACTS = "spark-sql-kafka-0-10_2.13,spark-token-provider-kafka-0-10_2.13,kafka-clients,commons-pool2"


class KafkaSetupError(RuntimeError):
    pass


def fetch(pom: str, into: str, extra: Sequence[str] = ()) -> List[str]:
    """The jars of ``pom``'s dependencies, copied into ``into`` by Maven the first time."""
    if not glob.glob(os.path.join(into, "*.jar")):
        proc = subprocess.run(
            [
                "mvn",
                "-B",
                "-q",
                "-s",
                os.path.join(POMS, "settings.xml"),
                "-f",
                os.path.join(POMS, pom),
                "dependency:copy-dependencies",
                f"-DoutputDirectory={into}",
                *extra,
            ],
            capture_output=True,
            text=True,
            timeout=900,
            cwd=ROOT,
        )
        if proc.returncode != 0:
            raise KafkaSetupError(f"mvn could not fetch {pom}:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return sorted(glob.glob(os.path.join(into, "*.jar")))


def broker_jars() -> List[str]:
    return fetch("broker-pom.xml", os.path.join(KAFKA_DIR, "broker"))


def connector_jars() -> List[str]:
    """Spark's Kafka source and sink with their runtime dependencies (not Spark's own jars)."""
    return fetch(
        "connector-pom.xml",
        os.path.join(KAFKA_DIR, "connector"),
        ("-DincludeScope=runtime", f"-DincludeArtifactIds={CONNECTOR_ARTIFACTS}"),
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, process: subprocess.Popen, log: str, seconds: int) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise KafkaSetupError(f"the broker exited with {process.returncode}:\n{open(log).read()[-4000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.5)
    raise KafkaSetupError(
        f"the broker did not listen on 127.0.0.1:{port} within {seconds} s:\n{open(log).read()[-4000:]}"
    )


@contextmanager
def broker(work: str, heap: str = "512m", partitions: int = 1, settings: Sequence[str] = ()) -> Iterator[str]:
    """A broker with its data under ``work``, listening on loopback only; yields its bootstrap address.
    ``settings`` are more ``name=value`` lines of its configuration."""
    jars = broker_jars()
    os.makedirs(work, exist_ok=True)
    port, controller = free_port(), free_port()
    config = os.path.join(work, "server.properties")
    with open(config, "w") as fh:
        fh.write(
            "\n".join(
                [
                    "process.roles=broker,controller",
                    "node.id=1",
                    f"controller.quorum.voters=1@127.0.0.1:{controller}",
                    f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}",
                    f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}",
                    "controller.listener.names=CONTROLLER",
                    "inter.broker.listener.name=PLAINTEXT",
                    "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                    f"log.dirs={os.path.join(work, 'data')}",
                    f"num.partitions={partitions}",
                    "offsets.topic.replication.factor=1",
                    "transaction.state.log.replication.factor=1",
                    "transaction.state.log.min.isr=1",
                    "group.initial.rebalance.delay.ms=0",
                    "auto.create.topics.enable=true",
                    *settings,
                ]
            )
            + "\n"
        )
    java = ["java", f"-Xmx{heap}", "-cp", os.pathsep.join(jars)]
    cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    formatted = subprocess.run(
        java + ["kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", config],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if formatted.returncode != 0:
        raise KafkaSetupError(f"formatting the broker's storage failed:\n{formatted.stdout}{formatted.stderr}")
    log = os.path.join(work, "broker.log")
    with open(log, "w") as out:
        process = subprocess.Popen(java + ["kafka.Kafka", config], stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_for_port(port, process, log, 120)
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
