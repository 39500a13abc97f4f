"""The sinks users write to, with the executor and driver kills of test_cluster_faults.py: a real Kafka broker
(local_kafka.py) -> an operator -> a Delta table, and the same pipeline into a Kafka topic. The operators are
cluster_job.py's: suppress, the windowed aggregation (final counts on window close), the stream-table join (2 s of
grace; its table side is the topic ``tiers``) and the chain join -> windowed aggregation -> suppress.

The input is produced once to one-partition topics and read a fixed number of records per micro-batch, so every run
sees the same batches. The reference is an uninterrupted run of the same pipeline into Spark's file sink.
Delta's streaming sink commits each batch once (exactly-once): the table must equal the reference, with no duplicate
and no missing row. Spark's Kafka sink is at-least-once: a batch that was written but not yet recorded in the
checkpoint when its driver died is written again, so the topic must hold every reference row, and the duplicates are
counted and recorded (target/reliability/cluster-faults.jsonl; docs/reliability.md).

Without RELIABILITY: suppress only, with a driver kill into each sink. With RELIABILITY=1 (`make reliability`):
suppress and the chain into each sink (RELIABILITY_LONG: every operator), suppress with an executor kill, a driver
kill and another executor kill, the others with an executor kill and a driver kill (a driver kill costs a second
submission; it reruns the batch it hit, which Kafka's sink then writes again); the reference runs of every operator
are one submission.

Delta has no release for Spark 4.3 (delta.py): this module runs on the 4.2 line (`make reliability` runs it with the
4.2 venv); on a line with no Delta release the Delta test fails, saying so.
"""

import json
import os
import time
from collections import Counter

import cluster_job
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
LONG = bool(os.environ.get("RELIABILITY_LONG"))
# The kills of each operator's runs; the driver kill is what makes Kafka's sink write a batch twice. `make
# reliability` runs suppress and the chain, whose nodes are the join, the windowed aggregation and a suppress (45
# minutes on 2 cores leave no room for the stand-alone join and aggregation: 24-31 minutes more); RELIABILITY_LONG
# adds them.
if FULL:
    OPERATORS = cluster_job.OPERATORS if LONG else ("suppress", "chain")
    KINDS = {op: ("executor", "driver", "executor") if op == "suppress" else ("executor", "driver") for op in OPERATORS}
else:
    OPERATORS = ("suppress",)
    KINDS = {"suppress": ("driver",)}


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


def job_args(operators: str, work: str, broker: str, sink: str, topic: str = "out"):
    return [
        operators,
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
    """Produces the input, then runs the pipeline of every operator under test without faults into the file sink, one
    operator after another in one submission; returns each operator's batch count and rows."""
    work = str(tmp_path_factory.mktemp("reference"))
    started = time.monotonic()
    result = run_with_kills(
        cluster,
        [wheel_jar] + local_kafka.connector_jars(),
        job_args(",".join(OPERATORS), work, broker, "files") + ["--produce", str(BATCHES)],
        os.path.join(work, "submit"),
        Plan(),
        None,
    )
    record(
        {
            "test": "sinks-reference",
            "operators": list(OPERATORS),
            "spark": spark_line()[0],
            "seconds": round(time.monotonic() - started),
            "timings": result["timings"],
            "rows": {op: len(rows) for op, rows in result["results"].items()},
        }
    )
    found = {}
    for op in OPERATORS:
        rows = result["results"][op]
        assert len(rows) >= 10, f"{op}: the input must produce output for the comparison to mean anything: {rows}"
        found[op] = (result["query_batches"][f"cf-{op}"], rows)
    return found


def run_sink(operator, sink, cluster, broker, jars, reference, tmp_path, topic):
    seed, rnd = seeded(f"{operator} from Kafka to {sink}")
    batches, expected_rows = reference[operator]
    plan = Plan.draw(rnd, batches, KINDS[operator])
    started = time.monotonic()
    result = run_with_kills(
        cluster,
        jars,
        job_args(operator, str(tmp_path / "run"), broker, sink, topic),
        str(tmp_path / "submit"),
        plan,
        rnd,
    )
    got, expected = Counter(result["rows"]), Counter(expected_rows)
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
        "operator": operator,
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
    assert len(plan.kills) == len(KINDS[operator]) and all(k.target for k in plan.kills), result["kills"]
    # Each kill hit a batch after one that left records in the operator's state.
    assert all(k.state_rows_before for k in plan.kills), result["kills"]
    return seed, result, figures


@pytest.mark.parametrize("operator", OPERATORS)
def test_kafka_to_delta_is_exactly_once_across_kills(cluster, broker, wheel_jar, reference, operator, tmp_path):
    line = spark_line()[0]
    if delta.release(line) is None:
        pytest.fail(
            f"Delta Lake has no release for Spark {line} on Maven Central (delta.py): run this module on "
            f"the 4.2 line, as `make reliability` does"
        )
    jars = [wheel_jar] + local_kafka.connector_jars() + delta.jars(line)
    seed, result, figures = run_sink(operator, "delta", cluster, broker, jars, reference, tmp_path, "out")
    assert figures["duplicates"] == 0 and figures["missing"] == 0 and figures["foreign"] == 0, (
        f"seed {seed}, {result['kills']}: {figures}"
    )


@pytest.mark.parametrize("operator", OPERATORS)
def test_kafka_to_kafka_is_at_least_once_across_kills(cluster, broker, wheel_jar, reference, operator, tmp_path):
    jars = [wheel_jar] + local_kafka.connector_jars()
    # A topic per operator: each run's topic holds only what that run wrote.
    topic = f"out-{operator}-kafka"
    seed, result, figures = run_sink(operator, "kafka", cluster, broker, jars, reference, tmp_path, topic)
    # Nothing lost and nothing invented; duplicates are allowed (at-least-once) and recorded above.
    assert figures["missing"] == 0 and figures["foreign"] == 0, f"seed {seed}, {result['kills']}: {figures}"
