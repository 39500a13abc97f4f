"""Benchmark: Kafka Streams itself against spark-suppress on Spark, end to end through a real broker.

The same windowed count (per key and 10-second tumbling window, 2 s grace, final results only) as a Kafka Streams
application (``emitStrategy(onWindowClose())``, benchmarks/jvm/.../kafka/WindowedCountApp.java) and as
spark-suppress's ``aggregate_windowed(on_window_close)`` reading and writing with Spark's Kafka connector
(benchmarks/spark_jobs/kafka_windowed_count.py, run with spark-submit). A single-node KRaft broker runs on loopback
(reliability/local_kafka.py). Per run, each system gets fresh topics (2 partitions: one per core) and starts from a
cold JVM; then the driver (KafkaDriver.java, the same for both) produces the events of ``final_results``, with their
event times as record timestamps, and reads the results topic until every final result has arrived. ``seconds`` is
from the first event produced to the last final result consumed, so it includes each system's start-up, as a
deployment would see it. Check, on every run of each system: its results equal the counts computed from the
input, and no window's final result came twice.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np
import pyarrow.parquet as pq

from . import checks as result_checks
from . import events as ev
from . import local_fs, profile
from .buffer_core import classpath, jar_version
from .context import Context
from .measure import log, median_index, target
from .streaming import driver_java_options

NAME = "kafka_streams"
GRACE_MS = 2_000
# spark-suppress's watermark delay. Its grace already holds a window open for GRACE_MS, as Kafka Streams' does; a
# delay would add a lateness allowance on top (docs/emit.md, "Semantics") that Kafka Streams does not have, and
# hold every final result back by as much. 0 is the setting the docs give for Kafka's timing.
WATERMARK_DELAY_MS = 0
# Spark settings for spark-suppress's runs beyond the usual ones: latency_at_rate.py's `--early-close off` sets the
# internal switch that closes windows at the watermark only (docs/emit.md), to measure what closing them early gains.
SPARK_CONF: Dict[str, str] = {}
PARTITIONS = 2


def _local_kafka(root: str):
    sys.path.insert(0, os.path.join(root, "reliability"))
    import local_kafka

    return local_kafka


def events_csv(data_dir: str, path: str) -> str:
    """The event set as ``key,timestamp ms,value`` lines in arrival order, for the driver to produce."""
    out = path.rstrip("/") + ".csv"
    if os.path.exists(out):
        return out
    t = pq.read_table(path, columns=["key", "ts", "value", "seq"]).to_pandas().sort_values("seq", kind="stable")
    t["ms"] = t["ts"].values.astype("datetime64[ms]").astype("int64")
    t[["key", "ms", "value"]].to_csv(out + ".tmp", header=False, index=False)
    os.rename(out + ".tmp", out)
    return out


def expected_counts(path: str, window_ms: int) -> Dict[str, int]:
    t = pq.read_table(path, columns=["key", "ts"]).to_pandas()
    t = t[~ev.is_flush(t["key"])]
    ms = t["ts"].values.astype("datetime64[ms]").astype("int64")
    t = t.assign(start=ms - np.mod(ms, window_ms))
    counts = t.groupby(["key", "start"]).size()
    return {f"{k}@{s}": int(c) for (k, s), c in counts.items()}


def spark_jars(root: str) -> List[str]:
    """spark-suppress's jar for the running PySpark and Spark's Kafka connector, for spark-submit's ``--jars``.

    The package's own choice of jar: its folder holds one jar per Spark line once `make test` has built them all, and
    another line's jar on the classpath fails (Scala 2.12 classes under Spark 4)."""
    import spark_suppress

    return [spark_suppress.jar_path()] + _local_kafka(root).connector_jars()


def _java() -> List[str]:
    return ["java", f"-Xmx{os.environ.get('BENCH_DRIVER_MEMORY', '4g')}", "-Duser.timezone=UTC"]


def _spark_submit() -> str:
    import pyspark

    return os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit")


def _start(
    system: str,
    root: str,
    cp: str,
    jars: List[str],
    bootstrap: str,
    topic_in: str,
    topic_out: str,
    run_dir: str,
    window_ms: int,
    event_log: bool,
    extra: Sequence[str] = (),
    prefix: Sequence[str] = (),
) -> subprocess.Popen:
    """Starts a system under test; ``extra`` arguments go after the usual ones (the sustained benchmark's job and
    trigger), ``prefix`` before the command (``taskset``)."""
    log_file = open(os.path.join(run_dir, f"{system}.log"), "w")
    if system == "kafka-streams":
        cmd = _java() + [
            "-cp",
            cp,
            "io.github.sparksuppress.bench.kafka.WindowedCountApp",
            bootstrap,
            os.path.basename(run_dir),
            topic_in,
            topic_out,
            os.path.join(run_dir, "state"),
            str(window_ms),
            str(GRACE_MS),
            str(PARTITIONS),
            *extra,
        ]
        env = dict(os.environ)
    else:
        conf = {"spark.driver.extraJavaOptions": driver_java_options(), **local_fs.conf(), **SPARK_CONF}
        if event_log:  # for _spark_breakdown
            os.makedirs(os.path.join(run_dir, "eventlog"))
            conf.update(profile.event_log_conf(os.path.join(run_dir, "eventlog")))
        cmd = [_spark_submit(), "--master", "local[2]", "--driver-memory", os.environ.get("BENCH_DRIVER_MEMORY", "4g")]
        cmd += [a for k, v in conf.items() for a in ("--conf", f"{k}={v}")]
        cmd += [
            "--jars",
            ",".join(jars),
            os.path.join(root, "benchmarks", "spark_jobs", "kafka_windowed_count.py"),
            bootstrap,
            topic_in,
            topic_out,
            os.path.join(run_dir, "checkpoint"),
            str(window_ms),
            str(GRACE_MS),
            str(WATERMARK_DELAY_MS),
            *extra,
        ]
        env = dict(
            os.environ,
            PYSPARK_PYTHON=sys.executable,
            PYSPARK_DRIVER_PYTHON=sys.executable,
            PYTHONPATH=os.path.join(root, "python"),
        )
    return subprocess.Popen([*prefix, *cmd], stdout=log_file, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _drive(
    cmd: List[str],
    system_process: subprocess.Popen,
    run_dir: str,
    system: str,
    tick: Optional[Callable[[subprocess.Popen], None]] = None,
):
    """Runs the driver to its end; stops it (and fails) as soon as the system under test exits, which it never
    does on its own, rather than letting the driver wait for results until its timeout. ``tick``, if given, is
    called with the driver every half second (its standard input is a pipe then); if it raises, the driver is
    stopped."""
    out_path = os.path.join(run_dir, "driver.log")
    with open(out_path, "w") as out:
        stdin = subprocess.PIPE if tick else None
        driver = subprocess.Popen(cmd, stdin=stdin, stdout=out, stderr=subprocess.STDOUT, text=True)
        try:
            while driver.poll() is None:
                if system_process.poll() is not None:
                    tail = open(os.path.join(run_dir, f"{system}.log")).read()[-3000:]
                    raise RuntimeError(f"{system} exited with {system_process.returncode}; its log ends:\n{tail}")
                if tick:
                    tick(driver)
                time.sleep(0.5)
        except BaseException:
            _stop(driver)
            raise
    with open(out_path) as fh:
        return fh.read(), driver.returncode


def _started_seconds(run_dir: str, system: str, first_produced_ms: int) -> float:
    """Seconds from the first event produced to the system's start returning (its ``STARTED <ms>`` line): the
    start-up share of a run, which a cold JVM, and for Spark a Python driver and a session, cost."""
    with open(os.path.join(run_dir, f"{system}.log")) as fh:
        for line in fh:
            if line.startswith("STARTED "):
                return round((int(line.split()[1]) - first_produced_ms) / 1000, 3)
    raise RuntimeError(f"{system} never printed its STARTED line (see {run_dir})")


def _spark_breakdown(run_dir: str) -> Dict[str, Any]:
    """Where the Spark side's time went once its query had started: the micro-batch phases from the progress the
    job prints and, with an event log, the stages and operators of its query (harness/profile.py)."""
    run_id, progress = None, []
    with open(os.path.join(run_dir, "spark-suppress.log")) as fh:
        for line in fh:
            if line.startswith("RUN_ID "):
                run_id = line.split()[1]
            elif line.startswith("PROGRESS "):
                progress.append(json.loads(line[len("PROGRESS ") :]))
    out: Dict[str, Any] = {
        "phases": profile.phases(progress),
        "input_rows_per_batch": [p["numInputRows"] for p in progress],
    }
    logs = os.path.join(run_dir, "eventlog")
    files = os.listdir(logs) if os.path.isdir(logs) else []
    if run_id and len(files) == 1:
        out.update(profile.EventLog(os.path.join(logs, files[0])).breakdowns([run_id], ended=False)[run_id])
    return out


def _check(rows_path: str, expected: Dict[str, int], duplicate_results: int) -> Dict[str, Any]:
    """One run's results file (the last result per key, as the driver kept them) against the expected counts; the
    driver counts the results that came again for a key, which the file cannot show."""
    got = {}
    with open(rows_path) as fh:
        for line in fh:
            k, v = line.rstrip("\n").rsplit(",", 1)
            got[k] = int(v)
    return result_checks.check_kafka_run(got, expected, duplicate_results)


def run(ctx: Context, root: str, event_log: bool = True) -> Dict[str, Any]:
    """``event_log``: the Spark side writes one, for the stage breakdown of its runs (no Spark session of this
    process is involved, so ``ctx.event_log`` does not apply)."""
    s, shape = ctx.settings, ctx.settings.final_results
    local_kafka = _local_kafka(root)
    path = ev.events(ctx.data_dir, shape)
    csv = events_csv(ctx.data_dir, path)
    expected = expected_counts(path, s.window_ms)
    cp = classpath(root, os.path.dirname(ctx.data_dir))
    jars = spark_jars(root)
    work = ctx.scratch(NAME)
    shutil.rmtree(work, ignore_errors=True)
    systems = ["kafka-streams", "spark-suppress"]
    runs: Dict[str, List[Dict[str, Any]]] = {n: [] for n in systems}
    checks: Dict[str, List[Dict[str, Any]]] = {n: [] for n in systems}  # one per run
    timeout_s = 1800 if s.mode == "full" else 600
    # The events' timestamps are from 2023: with the default 7-day retention by record time the broker would delete
    # each segment of every topic as soon as it rolled, events and results alike.
    with local_kafka.broker(
        os.path.join(work, "broker"), heap="1g", partitions=PARTITIONS, settings=["log.retention.ms=-1"]
    ) as bootstrap:
        for r in range(s.kafka_repeats):
            for system in systems:  # round robin, as the other benchmarks
                run_dir = os.path.join(work, f"{system}-{r}")
                os.makedirs(run_dir)
                topic_in, topic_out = f"events-{system}-{r}", f"results-{system}-{r}"
                driver = _java() + ["-cp", cp, "io.github.sparksuppress.bench.kafka.KafkaDriver"]
                made = subprocess.run(
                    driver + ["topics", bootstrap, str(PARTITIONS), topic_in, topic_out],
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
                if made.returncode != 0:
                    raise RuntimeError(f"creating topics failed:\n{made.stdout[-2000:]}{made.stderr[-2000:]}")
                process = _start(
                    system, root, cp, jars, bootstrap, topic_in, topic_out, run_dir, s.window_ms, event_log
                )
                rows_path = os.path.join(run_dir, "results.csv")
                try:
                    stdout, returncode = _drive(
                        driver
                        + ["run", bootstrap, topic_in, topic_out, csv, str(len(expected)), str(timeout_s), rows_path],
                        process,
                        run_dir,
                        system,
                    )
                finally:
                    _stop(process)
                lines = [s for s in stdout.splitlines() if s.startswith("RESULT ")]
                if returncode != 0 or not lines:
                    raise RuntimeError(f"the driver failed for {system}:\n{stdout[-3000:]}")
                result = json.loads(lines[-1][len("RESULT ") :])
                if not result["complete"]:
                    tail = open(os.path.join(run_dir, f"{system}.log")).read()[-3000:]
                    raise RuntimeError(
                        f"{system} produced {result['results']} of {len(expected)} final results "
                        f"within {timeout_s} s; its log ends:\n{tail}"
                    )
                seconds = (result["last_consumed_ms"] - result["first_produced_ms"]) / 1000
                result["seconds"] = round(seconds, 3)
                result["started_seconds"] = _started_seconds(run_dir, system, result["first_produced_ms"])
                if system == "spark-suppress":
                    result["breakdown"] = _spark_breakdown(run_dir)
                result["produce_seconds"] = round((result["last_produced_ms"] - result["first_produced_ms"]) / 1000, 3)
                runs[system].append(result)
                checks[system].append(_check(rows_path, expected, int(result["duplicate_results"])))
                log(
                    f"{system} run {r + 1}/{s.kafka_repeats}: {seconds:.2f} s from the first event produced to "
                    f"the last result consumed (started after {result['started_seconds']:.2f} s), "
                    f"{shape.records / seconds:,.0f} records/s; same final rows, none twice: "
                    f"{checks[system][-1]['same_final_rows']}"
                )
                if checks[system][-1]["same_final_rows"]:  # a failed run's logs and results stay for a look
                    shutil.rmtree(run_dir, ignore_errors=True)
    records = []
    for system in systems:
        median_run = runs[system][median_index([x["seconds"] for x in runs[system]])]
        median = median_run["seconds"]
        breakdown = median_run.get("breakdown")
        for x in runs[system]:  # the median run's goes on the system's record, as in the other benchmarks
            x.pop("breakdown", None)
        records.append(
            {
                "system": system,
                "role": "anchor" if system == "kafka-streams" else "library",
                "label": (
                    "Kafka Streams windowedBy(TimeWindows).emitStrategy(onWindowClose()).count()"
                    if system == "kafka-streams"
                    else "spark-suppress aggregate_windowed(on_window_close), Spark's Kafka source and sink"
                ),
                "records": shape.records,
                "seconds": median,
                "records_per_s": round(shape.records / median, 1),
                "runs": runs[system],
            }
        )
        if breakdown:
            records[-1]["breakdown"] = breakdown
    records[1]["time_ratio_to_anchor"] = round(records[1]["seconds"] / records[0]["seconds"], 4)
    records[0]["time_ratio_to_anchor"] = 1.0
    return {
        "title": "End to end through Kafka: Kafka Streams vs spark-suppress",
        "params": {
            "records": shape.records,
            "keys": shape.keys,
            "window_ms": s.window_ms,
            "grace_ms": GRACE_MS,
            "spark_watermark_delay_ms": WATERMARK_DELAY_MS,
            "partitions": PARTITIONS,
            "stream_threads": PARTITIONS,
            "spark_master": "local[2]",
            "runs_per_system": s.kafka_repeats,
            "broker": "Apache Kafka 3.9.2, KRaft, one node, loopback",
        },
        "versions": {"kafka-streams": jar_version(cp, "kafka-streams")},
        "systems": records,
        "check": {"same_final_rows": result_checks.every_run_holds(checks), "systems": checks},
        "targets": [
            target(
                "records/s over Kafka Streams' on the same job",
                records[1]["records_per_s"] / records[0]["records_per_s"],
                ">=",
                1.0,
                "x",
            )
        ],
    }
