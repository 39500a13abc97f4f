"""The test driver on a Spark Connect session (``spark_suppress.testing.TestDriver`` runs it for Connect sessions).

The classic driver runs on the JVM (MemoryStream in, foreachBatch out); a Connect client has neither, so this one
reaches the same behaviour through the public Connect API only: each input is a Parquet file stream whose step
writes exactly one file (so one step is one micro-batch), and the output is a Parquet file sink, whose commit log
(``_spark_metadata``, one entry per micro-batch) tells which files each batch wrote, so a step reads what was
emitted, in order. ``processAllAvailable()`` runs a step to completion, including the no-data batch a moved
watermark triggers, exactly as in the classic driver. Nothing runs in a Python worker on the server.

The client writes each step's file and reads the emitted ones itself, with pyarrow (client and server share a file
system), converting rows as Connect's own ``createDataFrame`` and ``collect`` do (``_pyspark``): a Spark job to
write the file and another to read the output cost the server more than the step's micro-batch.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, cast

from ._connect import progress_field
from ._pyspark import arrow_to_rows, rows_to_arrow

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row, SparkSession
    from pyspark.sql.types import StructType


def _sink_log_files(path: str) -> List[str]:
    """The data files of one entry of a file sink's commit log (a JSON line per file after a version line)."""
    import json

    with open(path) as f:
        lines = f.read().splitlines()[1:]
    return [json.loads(line)["path"].rsplit("/", 1)[-1] for line in lines if line.strip()]


class Driver:
    """File streams in and out of the pipeline, one Parquet file per step (the module's docstring says why)."""

    def __init__(self, spark: "SparkSession") -> None:
        self._spark = spark
        self._dir = tempfile.mkdtemp(prefix="spark-suppress-connect-driver-")
        self._inputs: Dict[str, "DataFrame"] = {}
        self._files = 0
        self._rows_added = 0
        self._rows_seen = 0
        self._rows_by_batch: Dict[int, int] = {}
        self._last_batch_read = -1
        self._files_read: set = set()
        self._pipeline: Optional["DataFrame"] = None
        self._query: Any = None
        self._processing_time = False
        # For idle(): when the query's time last moved, when the latest executed batch started (epoch ms), the
        # watermark it ran with, the batches already looked at, and whether input came since the last restart.
        self._moved_at: Optional[float] = None
        self._latest_start: Optional[float] = None
        self._watermark: Optional[str] = None
        self._progress_seen: set = set()
        self._restarted_without_input = False

    def parse_schema(self, ddl: str) -> "StructType":
        # The server parses DDL strings: the client has no parser of its own without a JVM.
        return self._spark.createDataFrame([], ddl).schema

    def add_input(self, name: str, struct: "StructType", timestamp: Optional[str], watermark_delay: str) -> "DataFrame":
        if self._pipeline is not None:
            raise ValueError("add inputs before start()")
        if name in self._inputs:
            raise ValueError(f"input {name!r} exists already")
        directory = os.path.join(self._dir, f"input-{len(self._inputs)}")
        os.makedirs(directory)
        df = self._spark.readStream.schema(struct).parquet(directory)
        if timestamp is not None:
            df = df.withWatermark(timestamp, watermark_delay)
        self._inputs[name] = df
        return df

    def input(self) -> "DataFrame":
        return next(iter(self._inputs.values()))

    def start(self, pipeline: "DataFrame") -> None:
        if self._query is not None:
            raise ValueError("the driver is already started; stop() it first")
        self._pipeline = pipeline
        # Processing-time timers keep the query busy (Spark runs a batch per trigger to check them), so such a step
        # waits for the batch that holds its rows instead of for an idle query, as the classic driver does.
        self._processing_time = "ProcessingTimeTimeout" in cast(Any, pipeline)._explain_string(extended=True)
        self._output_schema = pipeline.schema
        self._run()

    def _run(self) -> None:
        assert self._pipeline is not None
        self._query = (
            self._pipeline.writeStream.format("parquet")
            .option("path", os.path.join(self._dir, "output"))
            .option("checkpointLocation", os.path.join(self._dir, "checkpoint"))
            .trigger(processingTime="20 milliseconds" if self._processing_time else "0 seconds")
            .start()
        )

    def step(self, input: str, schema: "StructType", rows: List[Any]) -> List["Row"]:
        if self._query is None:
            raise ValueError("start(pipeline) the driver before feeding it")
        if rows:
            self._add_file(input, schema, rows)
            self._rows_added += len(rows)
            self._restarted_without_input = False
        return self.advance()

    def _add_file(self, input: str, schema: "StructType", rows: List[Any]) -> None:
        # Written aside and renamed in: the file source must see the step's single file whole or not at all.
        import pyarrow.parquet as pq

        staging = os.path.join(self._dir, f"staging-{self._files}.parquet")
        pq.write_table(rows_to_arrow(rows, schema), staging)
        directory = os.path.join(self._dir, f"input-{list(self._inputs).index(input)}")
        os.rename(staging, os.path.join(directory, f"step-{self._files:09d}.parquet"))
        self._files += 1

    def advance(self) -> List["Row"]:
        if self._processing_time:
            self._await_input_rows()
        else:
            self._query.processAllAvailable()
        return self._drain()

    def _await_input_rows(self) -> None:
        import time

        while self._rows_seen < self._rows_added:
            # An idle trigger reports the upcoming batch id with no rows, so a batch's rows count once it has run.
            for p in self._query.recentProgress:
                batch = progress_field(p, "batchId")
                self._rows_by_batch[batch] = max(self._rows_by_batch.get(batch, 0), progress_field(p, "numInputRows"))
            self._rows_seen = sum(self._rows_by_batch.values())
            exception = self._query.exception()
            if exception is not None:
                raise exception
            if self._rows_seen < self._rows_added:
                time.sleep(0.02)  # the query runs a batch per 20 ms trigger; nothing else would tell us sooner

    def idle(self, ms: int) -> List["Row"]:
        import time

        if self._query is None:
            raise ValueError("start(pipeline) the driver before letting it idle")
        if not self._processing_time:
            time.sleep(ms / 1000)  # Spark runs no micro-batch without input or processing-time timers
            self._query.processAllAvailable()
            return self._drain()
        if self._restarted_without_input:
            raise RuntimeError(
                "idle() right after restart(): Spark runs no micro-batch after a restart until input arrives, so no "
                "time would pass for the pipeline. Feed a step first."
            )
        self._await_input_rows()
        deadline = time.monotonic() + 120
        while not self._quiet_for(ms):
            exception = self._query.exception()
            if exception is not None:
                raise exception
            if time.monotonic() > deadline:
                raise RuntimeError(f"no micro-batch ran {ms} ms after the last input within 120 s")
            time.sleep(0.02)  # the query runs a batch per 20 ms trigger; nothing else would tell us sooner
        return self._drain()

    def _quiet_for(self, ms: int) -> bool:
        """Whether a batch that started ``ms`` after the query's time last moved has completed (as the classic
        driver waits)."""
        from datetime import datetime

        for p in self._query.recentProgress:
            seen = (str(progress_field(p, "runId")), progress_field(p, "batchId"))
            durations = progress_field(p, "durationMs")
            if seen in self._progress_seen or "addBatch" not in durations:
                continue  # Spark also reports triggers that ran no batch
            self._progress_seen.add(seen)
            started = datetime.fromisoformat(progress_field(p, "timestamp").replace("Z", "+00:00")).timestamp() * 1000
            watermark = (progress_field(p, "eventTime") or {}).get("watermark", "")
            if progress_field(p, "numInputRows") > 0 or watermark != self._watermark or self._moved_at is None:
                # Its end, not its start: the batch's own timestamp (what operators see) is taken after the trigger.
                self._moved_at = started + durations.get("triggerExecution", 0)
            self._watermark = watermark
            self._latest_start = max(self._latest_start or started, started)
        return (
            self._moved_at is not None and self._latest_start is not None and self._latest_start >= self._moved_at + ms
        )

    def _drain(self) -> List["Row"]:
        out = os.path.join(self._dir, "output")
        log = os.path.join(out, "_spark_metadata")
        entries: List[Tuple[int, str]] = []
        if os.path.isdir(log):
            for name in os.listdir(log):
                stem = name.split(".")[0]
                if stem.isdigit() and int(stem) > self._last_batch_read:
                    entries.append((int(stem), name))
        order: Dict[str, int] = {}
        for batch, name in sorted(entries):
            # Every tenth entry is a compaction listing all files so far: what it adds is that batch's files.
            for f in _sink_log_files(os.path.join(log, name)):
                if f not in self._files_read:
                    self._files_read.add(f)
                    order[f] = batch
            self._last_batch_read = batch
        if not order:
            return []
        import pyarrow as pa
        import pyarrow.parquet as pq

        names = self._output_schema.fieldNames()
        # By batch, then by task (part-NNNNN, the partition), then in file order: the order the batch emitted them in.
        files = sorted(order, key=lambda f: (order[f], f))
        table = pa.concat_tables([pq.read_table(os.path.join(out, f), columns=names) for f in files])
        return arrow_to_rows(table, self._output_schema)

    def restart(self) -> None:
        if not os.path.isdir(self._dir):
            raise ValueError("the driver is stopped and its checkpoint deleted; start(pipeline) it again")
        self._halt()
        self._run()
        self._restarted_without_input = True

    def _halt(self) -> None:
        if self._query is not None:
            try:
                self._query.stop()
            finally:
                self._query = None

    def stop(self) -> None:
        self._halt()
        shutil.rmtree(self._dir, ignore_errors=True)

    def query(self) -> Any:
        return self._query
