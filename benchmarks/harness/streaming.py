"""The Spark session of a benchmark run, and one streaming query run to completion and measured."""

from __future__ import annotations

import glob
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from . import jvm_jobs, local_fs, profile
from .events import EVENT_SCHEMA, FLUSH_KEYS

SHUFFLE_PARTITIONS = 2  # one state partition per core of the 2-core reference machine
WATERMARK_DELAY = "2 seconds"  # the events' disorder: no record is ever late
WATERMARK_DELAY_MS = 2_000  # the same, for the checks' references


def driver_java_options() -> str:
    """The Spark driver's JVM options, in the benchmark session and in the spark-submit jobs: UTC, and
    BENCH_DRIVER_JAVA_OPTIONS (e.g. -XX:StartFlightRecording=filename=bench.jfr,settings=profile to profile)."""
    return ("-Duser.timezone=UTC " + os.environ.get("BENCH_DRIVER_JAVA_OPTIONS", "")).strip()


def session(app: str = "spark-suppress-benchmarks", event_log_dir: Optional[str] = None):
    """A local session with the worktree's jar, sized for the benchmarks (4 GB driver, UTC, no UI), on the run's local
    file system (local_fs). With
    ``event_log_dir`` it writes Spark's event log there (one uncompressed JSON-lines file, read back by
    profile.EventLog for the breakdown of each run); earlier logs in that directory are removed first."""
    from pyspark.sql import SparkSession

    import spark_suppress as ss

    # Python workers (applyInPandasWithState) must run this interpreter, which has pandas and pyarrow.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # PySpark's own worker code triggers a pandas FutureWarning per micro-batch; it says nothing about the jobs.
    os.environ.setdefault("PYTHONWARNINGS", "ignore::FutureWarning")
    builder = (
        SparkSession.builder.master(f"local[{SHUFFLE_PARTITIONS}]")
        .appName(app)
        .config("spark.driver.memory", os.environ.get("BENCH_DRIVER_MEMORY", "4g"))
        .config("spark.sql.shuffle.partitions", str(SHUFFLE_PARTITIONS))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", driver_java_options())
        .config("spark.sql.streaming.numRecentProgressUpdates", "100000")
        .config("spark.sql.streaming.noDataMicroBatches.enabled", "true")
    )
    conf = local_fs.conf()
    # The driver's class path: the local file system's jar, if any, and the hand-written jobs' (one setting).
    conf["spark.driver.extraClassPath"] = os.pathsep.join(
        p for p in (conf.get("spark.driver.extraClassPath"), jvm_jobs.jar()) if p
    )
    for key, value in conf.items():
        builder = builder.config(key, value)
    if event_log_dir:
        shutil.rmtree(event_log_dir, ignore_errors=True)
        os.makedirs(event_log_dir)
        for key, value in profile.event_log_conf(event_log_dir).items():
            builder = builder.config(key, value)
    spark = ss.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def parquet_rows(directory: str) -> int:
    """The rows of the Parquet files a query or a floor wrote to ``directory``, from their footers."""
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in glob.glob(os.path.join(directory, "part-*.parquet")))


def read_files(spark, path: str, schema: str):
    """A streaming read of ``path`` taking one file per micro-batch, in name order."""
    return spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(path)


def watermarked_events(spark, path: str):
    """The event set at ``path`` as the windowed jobs read it: ``key`` and ``ts``, watermarked by WATERMARK_DELAY."""
    return read_files(spark, path, EVENT_SCHEMA).select("key", "ts").withWatermark("ts", WATERMARK_DELAY)


@dataclass
class StateSnapshot:
    """Spark's state metrics summed over a query's stateful operators, at one micro-batch."""

    rows: int = 0
    memory_bytes: int = 0
    current_version_bytes: int = 0
    sst_bytes: int = 0  # RocksDB state store: the live SST files of the version (0 on the default store)
    operators: List[Dict[str, Any]] = field(default_factory=list)

    @staticmethod
    def of(progress: Dict[str, Any]) -> "StateSnapshot":
        s = StateSnapshot()
        for op in progress.get("stateOperators") or []:
            s.rows += int(op.get("numRowsTotal", 0))
            s.memory_bytes += int(op.get("memoryUsedBytes", 0))
            s.current_version_bytes += int((op.get("customMetrics") or {}).get("stateOnCurrentVersionSizeBytes", 0))
            s.sst_bytes += int((op.get("customMetrics") or {}).get("rocksdbSstFileSize", 0))
            s.operators.append(
                {
                    "operator": op.get("operatorName"),
                    "rows": op.get("numRowsTotal"),
                    "memory_bytes": op.get("memoryUsedBytes"),
                    "current_version_bytes": (op.get("customMetrics") or {}).get("stateOnCurrentVersionSizeBytes"),
                }
            )
        return s


@dataclass
class QueryRun:
    """One measured run. ``seconds`` is wall time from ``start()`` until the query finished; ``data_batch_seconds``
    sums the micro-batches that read data (not the flush file or no-data batches), the steady-state cost."""

    records: int
    seconds: float
    processing_seconds: float
    data_batch_seconds: float
    batches: int
    data_batches: int
    input_rows: int
    state: StateSnapshot  # at the last data batch, before the flush empties the buffers
    peak_state: StateSnapshot  # at the data batch with the most state rows
    first_data_batch_seconds: float = 0.0  # the first micro-batch that read data, with the query's one-time costs
    steady_records: int = 0  # the records of the data batches after the first
    steady_seconds: float = 0.0  # those batches' time: the marginal cost once the query runs
    output_path: Optional[str] = None
    inspected: Optional[Dict[str, Any]] = None
    # Where the time went (profile.py): the micro-batch phases, and with an event log the stages and operators.
    breakdown: Optional[Dict[str, Any]] = None

    def summary(self) -> Dict[str, Any]:
        return {
            "seconds": round(self.seconds, 3),
            "processing_seconds": round(self.processing_seconds, 3),
            "data_batch_seconds": round(self.data_batch_seconds, 3),
            "batches": self.batches,
            "data_batches": self.data_batches,
            "input_rows": self.input_rows,
            "first_data_batch_seconds": round(self.first_data_batch_seconds, 3),
        }


def run_query(
    df,
    run_dir: str,
    records: int,
    output_mode: str = "append",
    keep_output: bool = False,
    inspect: Optional[Callable[[str, int], Dict[str, Any]]] = None,
    event_log: Optional[profile.EventLog] = None,
    per_batch: Optional[Callable[[Any], Any]] = None,
) -> QueryRun:
    """Writes ``df`` to Parquet with an availableNow trigger, waits for the end and measures it.

    ``records`` is the number of data records the input holds (the flush record aside). ``inspect`` is called
    with the checkpoint and the last data batch's id before the checkpoint is removed. With ``event_log`` the
    run's breakdown includes its stages, read from the log after the query ended (outside the timed part). With
    ``per_batch`` (a floor) each micro-batch's ``per_batch(batch)`` is appended to the same Parquet directory
    through ``foreachBatch`` instead of the file sink."""
    shutil.rmtree(run_dir, ignore_errors=True)
    out = os.path.join(run_dir, "out")
    checkpoint = os.path.join(run_dir, "checkpoint")
    started = time.perf_counter()
    writer = df.writeStream.option("checkpointLocation", checkpoint).outputMode(output_mode).trigger(availableNow=True)
    if per_batch is None:
        writer = writer.format("parquet").option("path", out)
    else:
        writer = writer.foreachBatch(lambda batch, _: per_batch(batch).write.mode("append").parquet(out))
    query = writer.start()
    query.awaitTermination()
    seconds = time.perf_counter() - started
    exception = query.exception()
    if exception is not None:
        raise RuntimeError(f"query in {run_dir} failed: {exception}")
    progress = query.recentProgress
    data = [p for p in progress if int(p.get("numInputRows", 0)) > FLUSH_KEYS]
    if not data:
        raise RuntimeError(f"query in {run_dir} read no data: check the input directory")

    def batch_seconds(batches):
        return sum(p["durationMs"].get("triggerExecution", 0) for p in batches) / 1000

    run = QueryRun(
        records=records,
        seconds=seconds,
        processing_seconds=batch_seconds(progress),
        data_batch_seconds=batch_seconds(data),
        batches=len(progress),
        data_batches=len(data),
        input_rows=sum(int(p.get("numInputRows", 0)) for p in progress),
        state=StateSnapshot.of(data[-1]),
        peak_state=max((StateSnapshot.of(p) for p in data), key=lambda s: s.rows),
        first_data_batch_seconds=batch_seconds(data[:1]),
        steady_records=sum(int(p.get("numInputRows", 0)) for p in data[1:]),
        steady_seconds=batch_seconds(data[1:]),
        output_path=out if keep_output else None,
        breakdown={"phases": profile.phases(progress)},
    )
    if event_log is not None:
        run.breakdown.update(event_log.breakdown(str(query.runId)))
    if inspect is not None:
        run.inspected = inspect(checkpoint, int(data[-1]["batchId"]))
    if not keep_output:
        shutil.rmtree(run_dir, ignore_errors=True)
    else:
        shutil.rmtree(checkpoint, ignore_errors=True)
    return run
