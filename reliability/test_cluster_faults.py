"""Executor and driver loss on a Spark standalone cluster (a master and two workers on loopback, each its own JVM,
from the PySpark distribution under test), with the job submitted by spark-submit --jars and the jar the wheel
bundles.

Each case runs one operator (cluster_job.py: suppress, the windowed aggregation, the stream-table join, or the chain
join -> aggregation -> suppress) over the same generated input, one file per micro-batch, to Spark's file sink, and
kills an executor JVM (SIGKILL) while a chosen micro-batch runs tasks, after the operator has buffered records: Spark
reschedules the tasks and loads the state from the checkpoint elsewhere. A driver kill SIGKILLs the spark-submit
JVM the same way, and the job is submitted again from the same checkpoint. The output must equal the uninterrupted
run's (on the HDFS-backed provider, so the RocksDB runs are compared with the other provider too); the windowed
aggregation is also compared with a count done here, in Python.

Without RELIABILITY (`make test`): one kill of each kind in one run of the aggregation (an executor kill, then a driver
kill and the resubmission), against the Python count: no uninterrupted run is needed, so the slice is one cluster and
two submissions. With RELIABILITY=1 (`make reliability`): every operator, 5 kills each (an executor kill, a driver
kill, three more executor kills), against the uninterrupted runs of all four operators, made by one submission. An
operator's runs on the HDFS-backed and on the RocksDB provider are two queries of one application, running at once:
each kill hits both, and the driver kill costs one resubmission for both (a run per provider cost three submissions
an operator for 5 kills; this costs two).
"""

import json
import os
import time
from collections import defaultdict
from datetime import datetime

import cluster_job
import pytest
from conftest import BUNDLED_JAR
from faults import Plan, record, run_with_kills, seeded
from standalone import standalone_cluster

FULL = bool(os.environ.get("RELIABILITY") or os.environ.get("RELIABILITY_LONG"))
BATCHES = 12  # micro-batches of records, before the two that move stream time on

if FULL:
    KINDS = ("executor", "driver", "executor", "executor", "executor")
    CASES = [(op, ("hdfs", "rocksdb"), KINDS) for op in cluster_job.OPERATORS]
else:
    # Both kinds in one run: a second run (or an uninterrupted reference) would cost a JVM start-up and every batch.
    CASES = [("aggregate", ("hdfs",), ("executor", "driver"))]


@pytest.fixture(scope="module")
def wheel_jar() -> str:
    if not os.path.isfile(BUNDLED_JAR):
        pytest.fail(f"{BUNDLED_JAR} is missing: `make jar` builds it and copies it into the package")
    return BUNDLED_JAR


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    started = time.monotonic()
    with standalone_cluster(str(tmp_path_factory.mktemp("cluster"))) as c:
        record({"test": "cluster-start", "seconds": round(time.monotonic() - started, 1)})
        yield c


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("input"))
    return directory, cluster_job.write_inputs(directory, BATCHES)


def canonical(rows):
    return sorted(json.dumps(json.loads(r), sort_keys=True) for r in rows)


def counted_in_python():
    """The aggregation's expected output, counted here: one row per user and 6-second window with its count and sum.
    Records arrive at most 1.5 s out of order and the grace is 2 s, so none is dropped, and the last batches move
    stream time a minute past every user's window, so every one of them closes."""
    events, _ = cluster_job.generate(BATCHES)
    windows = defaultdict(lambda: [0, 0])
    for batch in events:
        for r in batch:
            if r["user"] == "tick":
                continue
            ts = datetime.strptime(r["ts"], "%Y-%m-%dT%H:%M:%S.%fZ")
            start = int((ts - cluster_job.T0.replace(tzinfo=None)).total_seconds() // 6) * 6
            windows[(r["user"], cluster_job.at(start)[:-4] + "Z")][0] += 1
            windows[(r["user"], cluster_job.at(start)[:-4] + "Z")][1] += r["n"]
    return canonical(
        json.dumps({"user": u, "start": s, "records": c, "total": t}) for (u, s), (c, t) in windows.items()
    )


@pytest.fixture(scope="module")
def uninterrupted(cluster, inputs, wheel_jar, tmp_path_factory):
    """Each operator's output without faults (HDFS-backed state): the operators the cases compare with run at once
    in one submission, when a case first needs one (each submission costs a driver and executors' start)."""
    found = {}
    needed = sorted({op for op, _, _ in CASES if FULL or op != "aggregate"}, key=cluster_job.OPERATORS.index)

    def of(operator: str):
        if not found:
            work = str(tmp_path_factory.mktemp("reference"))
            result = run_with_kills(
                cluster,
                [wheel_jar],
                [",".join(needed), work, "--input", inputs[0], "--together"],
                os.path.join(work, "submit"),
                Plan(),
                None,
            )
            record({"test": "cluster-faults-reference", "operators": needed, "timings": result["timings"]})
            found.update({op: canonical(rows) for op, rows in result["results"].items()})
        return found[operator]

    return of


@pytest.mark.parametrize("operator,providers,kinds", CASES, ids=lambda v: "-".join(v) if isinstance(v, tuple) else v)
def test_output_after_kills_equals_the_uninterrupted_runs(
    cluster, inputs, wheel_jar, uninterrupted, operator, providers, kinds, tmp_path
):
    seed, rnd = seeded(f"{operator} on {' and '.join(providers)}")
    plan = Plan.draw(rnd, inputs[1], kinds)
    work = str(tmp_path / "run")
    started = time.monotonic()
    result = run_with_kills(
        cluster,
        [wheel_jar],
        [operator, work, "--input", inputs[0], "--provider", ",".join(providers)],
        str(tmp_path / "submit"),
        plan,
        rnd,
        queries=len(providers),
    )
    took = round(time.monotonic() - started)
    references = {}
    if operator == "aggregate":
        references["python count"] = counted_in_python()
    if FULL or operator != "aggregate":
        references["uninterrupted run"] = uninterrupted(operator)
    outputs = {}
    for provider in providers:
        got = canonical(result["results"][operator if len(providers) == 1 else f"{operator}-{provider}"])
        outputs[provider] = got
        entry = {
            "test": "cluster-faults",
            "operator": operator,
            "provider": provider,
            "seed": seed,
            "kills": result["kills"],
            "rows": len(got),
            "batches": result["batches"],
            "seconds": took,
            "timings": result["timings"],
            "equal": {name: got == rows for name, rows in references.items()},
        }
        record(entry)
        print(json.dumps(entry), flush=True)
    assert len(plan.kills) == len(kinds) and all(k.target for k in plan.kills), result["kills"]
    # Each kill hit every query in a batch after one that left records in the operator's state.
    assert all(k.state_rows_before and len(k.rows_before) == len(providers) for k in plan.kills), result["kills"]
    for provider, got in outputs.items():
        assert len(got) >= 10, "the input must produce output for the comparison to mean anything"
        for name, rows in references.items():
            assert got == rows, f"seed {seed}, {provider}, {result['kills']}: output differs from the {name}"
