"""The sinks users write to, with the executor and driver kills of test_cluster_faults.py: a real Kafka broker
(local_kafka.py) -> suppress -> a Delta table, and the same pipeline into a Kafka topic.

The input is produced once to one-partition topics and read a fixed number of records per micro-batch, so every run
sees the same batches. The reference is an uninterrupted run of the same pipeline into Spark's file sink.
Delta's streaming sink commits each batch once (exactly-once): the table must equal the reference, with no duplicate
and no missing row. Spark's Kafka sink is at-least-once: a batch that was written but not yet recorded in the
checkpoint when its driver died is written again, so the topic must hold every reference row, and the duplicates are
counted and recorded (target/reliability/cluster-faults.jsonl; docs/reliability.md).

Delta has no release for Spark 4.3 (delta.py): this module runs on the 4.2 line (`make reliability` runs it with the
4.2 venv); on a line with no Delta release the Delta test fails, saying so.
"""

import json
import os
import time
from collections import Counter

import delta
import local_kafka
import pytest
from conftest import BUNDLED_JAR
from faults import Plan, record, run_with_kills, seeded
from standalone import standalone_cluster

from spark_suppress._jars import spark_line

FULL = bool(os.environ.get("RELIABILITY") or os.environ.get("RELIABILITY_LONG"))
BATCHES = 12
RECORDS_PER_BATCH = 8
OPERATOR = "suppress"
# Executor kills around a driver kill; the driver kill is what makes Kafka's sink write a batch twice.
KINDS = ("executor", "driver", "executor") if FULL else ("driver",)


@pytest.fixture(scope="module")
def wheel_jar() -> str:
    if not os.path.isfile(BUNDLED_JAR):
        pytest.fail(f"{BUNDLED_JAR} is missing: `make jar SPARK={spark_line()[0]}` builds it")
    return BUNDLED_JAR


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    try:
        with local_kafka.broker(str(tmp_path_factory.mktemp("kafka"))) as bootstrap:
            yield bootstrap
    except local_kafka.KafkaSetupError as e:
        pytest.fail(str(e))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with standalone_cluster(str(tmp_path_factory.mktemp("cluster"))) as c:
        yield c


def job_args(work: str, broker: str, sink: str, topic: str = "out"):
    return [
        OPERATOR,
        work,
        "--source",
        "kafka",
        "--bootstrap",
        broker,
        "--sink",
        sink,
        "--topic",
        topic,
        "--records-per-batch",
        str(RECORDS_PER_BATCH),
    ]


@pytest.fixture(scope="module")
def reference(cluster, broker, wheel_jar, tmp_path_factory):
    """Produces the input, then runs the pipeline without faults into the file sink."""
    work = str(tmp_path_factory.mktemp("reference"))
    result = run_with_kills(
        cluster,
        [wheel_jar] + local_kafka.connector_jars(),
        job_args(work, broker, "files") + ["--produce", str(BATCHES)],
        os.path.join(work, "submit"),
        Plan(),
        None,
    )
    assert len(result["rows"]) >= 10, "the input must produce output for the comparison to mean anything"
    return result["batches"], result["rows"]


def run_sink(sink, cluster, broker, jars, reference, tmp_path, topic="out"):
    seed, rnd = seeded(f"{OPERATOR} from Kafka to {sink}")
    plan = Plan.draw(rnd, reference[0], KINDS)
    started = time.monotonic()
    result = run_with_kills(
        cluster, jars, job_args(str(tmp_path / "run"), broker, sink, topic), str(tmp_path / "submit"), plan, rnd
    )
    got, expected = Counter(result["rows"]), Counter(reference[1])
    figures = {
        "rows": sum(got.values()),
        "expected_rows": sum(expected.values()),
        "duplicates": sum((got - expected).values()),
        "missing": sum((expected - got).values()),
        "foreign": len(set(got) - set(expected)),
    }
    entry = {
        "test": "sinks",
        "sink": sink,
        "operator": OPERATOR,
        "provider": "hdfs",
        "spark": spark_line()[0],
        "seed": seed,
        "kills": result["kills"],
        "seconds": round(time.monotonic() - started),
        "timings": result["timings"],
        **figures,
    }
    record(entry)
    print(json.dumps(entry), flush=True)
    assert all(k.target for k in plan.kills) and all(k.state_rows_before for k in plan.kills), result["kills"]
    return seed, result, figures


def test_kafka_to_delta_is_exactly_once_across_kills(cluster, broker, wheel_jar, reference, tmp_path):
    line = spark_line()[0]
    if delta.release(line) is None:
        pytest.fail(
            f"Delta Lake has no release for Spark {line} on Maven Central (delta.py): run this module on "
            f"the 4.2 line, as `make reliability` does"
        )
    jars = [wheel_jar] + local_kafka.connector_jars() + delta.jars(line)
    seed, result, figures = run_sink("delta", cluster, broker, jars, reference, tmp_path)
    assert figures["duplicates"] == 0 and figures["missing"] == 0 and figures["foreign"] == 0, (
        f"seed {seed}, {result['kills']}: {figures}"
    )


def test_kafka_to_kafka_is_at_least_once_across_kills(cluster, broker, wheel_jar, reference, tmp_path):
    jars = [wheel_jar] + local_kafka.connector_jars()
    seed, result, figures = run_sink("kafka", cluster, broker, jars, reference, tmp_path, topic="out-kafka")
    # Nothing lost and nothing invented; duplicates are allowed (at-least-once) and recorded above.
    assert figures["missing"] == 0 and figures["foreign"] == 0, f"seed {seed}, {result['kills']}: {figures}"
