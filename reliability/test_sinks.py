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

The operators' queries into one sink run at once in one application (cluster_job.py --together), each with its own
checkpoint (and topic): every kill hits each of them, and a driver kill costs one resubmission for all of them (a
run per operator cost a start-up of the driver and executors more per operator). A Delta query and a Kafka query do
not share an application: a Delta commit costs several times a Kafka write, so the Kafka query ran far ahead and had
finished before the later kills, which then hit the Delta query alone.

Without RELIABILITY: suppress only, with a driver kill. With RELIABILITY=1 (`make reliability`): suppress and the
chain (RELIABILITY_LONG: every operator), with an executor kill, a driver kill and another executor kill (the driver
kill costs a second submission; it reruns the batch it hit, which Kafka's sink then writes again); the reference
runs of every operator are one submission.

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
# The kills of each sink's run (every operator's query in it is hit by each); the driver kill is what makes Kafka's
# sink write a batch twice. `make reliability` runs suppress and the chain, whose nodes are the join, the windowed
# aggregation and a suppress; RELIABILITY_LONG adds the stand-alone join and aggregation.
if FULL:
    OPERATORS = cluster_job.OPERATORS if LONG else ("suppress", "chain")
    KINDS = ("executor", "driver", "executor")
else:
    OPERATORS = ("suppress",)
    KINDS = ("driver",)


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
    """Produces the input, then runs the pipeline of every operator under test without faults into the file sink, the
    operators' queries at once in one submission; returns each operator's batch count and rows."""
    work = str(tmp_path_factory.mktemp("reference"))
    started = time.monotonic()
    result = run_with_kills(
        cluster,
        [wheel_jar] + local_kafka.connector_jars(),
        job_args(",".join(OPERATORS), work, broker, "files") + ["--produce", str(BATCHES), "--together"],
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


def run_sink(sink, cluster, broker, jars, reference, tmp_path):
    """One application with every operator's query into ``sink``, killed as drawn; returns the seed, the run's result
    and each operator's figures against the reference."""
    seed, rnd = seeded(f"{', '.join(OPERATORS)} from Kafka to {sink}")
    plan = Plan.draw(rnd, min(batches for batches, _ in reference.values()), KINDS)
    started = time.monotonic()
    # Topics out-<sink>-<operator>: each holds only what its query wrote in this run.
    result = run_with_kills(
        cluster,
        jars,
        job_args(",".join(OPERATORS), str(tmp_path / "run"), broker, sink, f"out-{sink}") + ["--together"],
        str(tmp_path / "submit"),
        plan,
        rnd,
        queries=len(OPERATORS),
    )
    figures = {}
    for operator in OPERATORS:
        got, expected = Counter(result["results"][operator]), Counter(reference[operator][1])
        figures[operator] = {
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
            **figures[operator],
        }
        record(entry)
        print(json.dumps(entry), flush=True)
    assert len(plan.kills) == len(KINDS) and all(k.target for k in plan.kills), result["kills"]
    # Each kill hit every query in a batch after one that left records in the operator's state.
    assert all(k.state_rows_before and len(k.rows_before) == len(OPERATORS) for k in plan.kills), result["kills"]
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
    assert all(f["duplicates"] == 0 and f["missing"] == 0 and f["foreign"] == 0 for f in figures.values()), (
        f"seed {seed}, {result['kills']}: {figures}"
    )


def test_kafka_to_kafka_is_at_least_once_across_kills(cluster, broker, wheel_jar, reference, tmp_path):
    jars = [wheel_jar] + local_kafka.connector_jars()
    seed, result, figures = run_sink("kafka", cluster, broker, jars, reference, tmp_path)
    # Nothing lost and nothing invented; duplicates are allowed (at-least-once) and recorded above.
    assert all(f["missing"] == 0 and f["foreign"] == 0 for f in figures.values()), (
        f"seed {seed}, {result['kills']}: {figures}"
    )
