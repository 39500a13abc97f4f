"""Benchmark: a chain of three operators in ONE query against the same steps as three queries through Parquet.

The chain (docs/chains.md, Kafka's classic final-results pattern after an enrichment): the benchmark's events
joined with a versioned table of each key's tier (``join_versioned``, grace 2 s), counted per key and 10-second
tumbling window with ``on_window_update`` (count, sum of the joined tier, and ``max(seq)``: the arrival number of
the window's last record), then ``suppress(until_window_closes)``: one final row per key and window.

- ``one query``: the three operators applied to each other's output, one streaming query (fused into one stateful
  step), ``availableNow``, one event file (and one table file) per micro-batch.
- ``split``: what users did before chains: three queries, each writing Parquet that the next reads as a file
  stream (with ``withWatermark("ts", "2 seconds")``, which the single aggregation and suppress need). They run
  concurrently, as a streaming pipeline is deployed: the first with ``availableNow`` on the same input, the others
  with the default trigger, each reading one micro-batch of its upstream per micro-batch (``maxFilesPerTrigger`` =
  the files an upstream micro-batch writes, one per shuffle partition). Reading more at once reorders records
  (Spark's file source packs files largest first) and the single operators then drop rows as late. A step is
  stopped once its upstream has ended and it has read all of its upstream's rows and gone idle.

Both wait out the join's grace with a second flush file: the join holds every stream record until its shard's
stream time is ``grace`` past it, the first flush records too, and only their release moves the clocks below it.

Measured: ``seconds`` from starting the (first) query to the end of the micro-batch that wrote the last final row;
per final row, the delay from the micro-batch that read its last contributing input record (``max(seq)``) to the
micro-batch that wrote the row. **Check** (fails the run): both produce the same final rows, which count every
record once.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import statistics
import time
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any, Dict, List, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from . import events as ev
from . import profile
from .context import Context
from .measure import log, log_breakdown, target
from .streaming import SHUFFLE_PARTITIONS, StateSnapshot, parquet_rows, read_files

NAME = "chains"
AGGREGATED_SCHEMA = "key string, ts timestamp, value long, seq long, tier long"  # the join's output
UPDATES_SCHEMA = (
    "key string, window struct<start: timestamp, end: timestamp>, count long, tier_sum long, "
    "last_seq long, ts timestamp"
)  # the aggregation's output
ROW_COLUMNS = ["key", "start", "end", "count", "tier_sum", "last_seq"]
SPLIT_STEPS = ("join", "aggregate", "suppress")
STEP_TIMEOUT_S = 900


# ---- input ---------------------------------------------------------------------------------------------------


def _link_all(src: str, out: str) -> None:
    for f in sorted(glob.glob(os.path.join(src, "part-*.parquet"))):
        try:
            os.link(f, os.path.join(out, os.path.basename(f)))
        except OSError:
            shutil.copy(f, out)


def inputs(ctx: Context, shape) -> Tuple[str, str]:
    """(events, table changelog) directories: the benchmark's event set and the join benchmark's table changelog,
    each with one more file: a second flush an hour after the first (a table file with no rows beside it), which
    lets the first flush through the join's grace buffer."""
    events_dir = ev.events(ctx.data_dir, shape)
    table_dir = ev.table_changelog(ctx.data_dir, shape, ctx.settings.join_table_version_interval_ms)

    def build_events(out: str) -> None:
        _link_all(events_dir, out)
        files = sorted(glob.glob(os.path.join(out, "part-*.parquet")))
        flush = pq.read_table(files[-1])
        flush = pa.table(
            {
                "key": flush["key"],
                "ts": ev._timestamps(flush["ts"].cast(pa.int64()).to_numpy() + ev.FLUSH_AFTER_MS),
                "value": flush["value"],
                "seq": pa.array(flush["seq"].to_numpy() + flush.num_rows),
            }
        )
        pq.write_table(flush, os.path.join(out, f"part-{len(files):05d}.parquet"))

    def build_table(out: str) -> None:
        _link_all(table_dir, out)
        files = sorted(glob.glob(os.path.join(out, "part-*.parquet")))
        empty = pq.read_table(files[-1]).slice(0, 0)
        pq.write_table(empty, os.path.join(out, f"part-{len(files):05d}.parquet"))

    return (
        ev._cached(ctx.data_dir, "chain-" + os.path.basename(events_dir), build_events),
        ev._cached(ctx.data_dir, "chain-" + os.path.basename(table_dir), build_table),
    )


# ---- the operators -------------------------------------------------------------------------------------------


def _grace(ctx: Context) -> timedelta:
    return timedelta(milliseconds=ctx.settings.chains_grace_ms)


def join(ctx: Context, events_dir: str, table_dir: str):
    import spark_suppress as ss

    return ss.join_versioned(
        read_files(ctx.spark, events_dir, ev.EVENT_SCHEMA),
        read_files(ctx.spark, table_dir, ev.TABLE_SCHEMA),
        on="key",
        stream_timestamp="ts",
        table_timestamp="changed_at",
        grace=_grace(ctx),
        history_retention=timedelta(milliseconds=ctx.settings.join_history_retention_ms),
        how="left",
    )


def aggregate(ctx: Context, joined, grace: timedelta):
    from pyspark.sql import functions as F

    import spark_suppress as ss

    return ss.aggregate_windowed(
        joined,
        key="key",
        timestamp="ts",
        windows=ss.TimeWindows.of_size_and_grace(timedelta(milliseconds=ctx.settings.window_ms), grace),
        aggregations=[F.count("*").alias("count"), F.sum("tier").alias("tier_sum"), F.max("seq").alias("last_seq")],
        emit=ss.EmitStrategy.on_window_update(),
    )


def final_results(updates, **standalone):
    import spark_suppress as ss

    return ss.suppress(
        updates,
        key="key",
        timestamp="ts",
        suppressed=ss.Suppressed.until_window_closes(ss.BufferConfig.unbounded()),
        **standalone,
    )


def one_query(ctx: Context, events_dir: str, table_dir: str):
    return final_results(aggregate(ctx, join(ctx, events_dir, table_dir), _grace(ctx)))


def split_grace(shape) -> timedelta:
    """The grace the split pipeline's later steps need: the event time one upstream micro-batch spans (one event
    file) plus the disorder. Within a micro-batch, the file source reads the upstream's files (one per shuffle
    partition, each in time order) one after another, so a step's stream time runs to the end of the first file
    before the second starts again at the beginning of the batch's time span."""
    return timedelta(milliseconds=shape.records_per_file * 1000 // shape.records_per_second + shape.disorder_ms)


def _upstream(ctx: Context, path: str, schema: str, grace: timedelta):
    return (
        ctx.spark.readStream.schema(schema)
        .option("maxFilesPerTrigger", SHUFFLE_PARTITIONS)
        .parquet(path)
        .withWatermark("ts", f"{int(grace.total_seconds() * 1000)} milliseconds")
    )


def split_steps(ctx: Context, events_dir: str, table_dir: str, run_dir: str, grace: timedelta):
    """(step, DataFrame) of the split pipeline; each step after the first reads the previous one's output."""
    out = {s: os.path.join(run_dir, s, "out") for s in SPLIT_STEPS}
    for path in out.values():  # a file stream's directory must exist when the query is built
        os.makedirs(path, exist_ok=True)
    return [
        ("join", join(ctx, events_dir, table_dir)),
        ("aggregate", aggregate(ctx, _upstream(ctx, out["join"], AGGREGATED_SCHEMA, grace), grace)),
        (
            "suppress",
            final_results(_upstream(ctx, out["aggregate"], UPDATES_SCHEMA, grace), window="window", grace=grace),
        ),
    ]


# ---- running -------------------------------------------------------------------------------------------------


class Step:
    """One query of a run, with what is needed afterwards: its progress, its checkpoint and its output."""

    def __init__(self, name: str, df, run_dir: str, available_now: bool) -> None:
        self.name = name
        self.out = os.path.join(run_dir, name, "out")
        self.checkpoint = os.path.join(run_dir, name, "checkpoint")
        os.makedirs(self.out, exist_ok=True)
        writer = (
            df.writeStream.format("parquet")
            .option("path", self.out)
            .option("checkpointLocation", self.checkpoint)
            .outputMode("append")
        )
        if available_now:
            writer = writer.trigger(availableNow=True)
        self.started = time.time()
        self.query = writer.start()
        self.progress: List[Dict[str, Any]] = []

    def finish(self) -> None:
        self.progress = list(self.query.recentProgress)
        exception = self.query.exception()
        if exception is not None:
            raise RuntimeError(f"{self.name} query failed: {exception}")

    def batches(self) -> List[Dict[str, Any]]:
        """The micro-batches that ran (idle triggers also report progress, without ``addBatch``)."""
        return [p for p in self.progress if "addBatch" in (p.get("durationMs") or {})]

    def times(self) -> Dict[int, Tuple[float, float]]:
        """batch id -> (start, end) in epoch seconds."""
        return {
            int(p["batchId"]): (
                _epoch(p["timestamp"]),
                _epoch(p["timestamp"]) + p["durationMs"]["triggerExecution"] / 1000,
            )
            for p in self.batches()
        }

    def rows_read(self) -> int:
        return sum(int(p.get("numInputRows", 0)) for p in self.batches())


def _epoch(timestamp: str) -> float:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


def _drain(step: Step, upstream: Step) -> None:
    """Waits until ``step`` has read every row its (terminated) upstream wrote and has gone idle, then stops it."""
    expected = parquet_rows(upstream.out)
    deadline = time.monotonic() + STEP_TIMEOUT_S
    last_batch = None
    while time.monotonic() < deadline:
        if step.query.exception() is not None:
            break
        progress = step.query.recentProgress
        read = sum(int(p.get("numInputRows", 0)) for p in progress if "addBatch" in (p.get("durationMs") or {}))
        batch = progress[-1]["batchId"] if progress else None
        if read >= expected and not step.query.status["isTriggerActive"] and batch == last_batch:
            break
        last_batch = batch if read >= expected else None
        time.sleep(0.1)
    else:
        raise RuntimeError(f"{step.name} did not read its upstream's {expected} rows within {STEP_TIMEOUT_S} s")
    step.query.stop()


def run_one_query(ctx: Context, inputs_: Tuple[str, str], run_dir: str, shape) -> List[Step]:
    step = Step("chain", one_query(ctx, *inputs_), run_dir, available_now=True)
    step.query.awaitTermination()
    step.finish()
    return [step]


def run_split(ctx: Context, inputs_: Tuple[str, str], run_dir: str, shape) -> List[Step]:
    steps: List[Step] = []
    try:
        for i, (name, df) in enumerate(split_steps(ctx, *inputs_, run_dir, split_grace(shape))):
            steps.append(Step(name, df, run_dir, available_now=i == 0))
        steps[0].query.awaitTermination()
        for upstream, step in zip(steps, steps[1:]):
            upstream.finish()
            _drain(step, upstream)
        steps[-1].finish()
    finally:
        for s in steps:
            if s.query.isActive:
                s.query.stop()
    return steps


RUNNERS = {"one-query": run_one_query, "split": run_split}
LABELS = {
    "one-query": "spark-suppress chain in one query: join_versioned -> aggregate_windowed(on_window_update) -> "
    "suppress(until_window_closes)",
    "split": "the same three operators as three concurrent queries through Parquet",
}


# ---- reading a run back --------------------------------------------------------------------------------------


def _log_entries(directory: str):
    """(batch id, JSON entries) of a metadata log (a sink's _spark_metadata, a file source's checkpoint log), in
    batch order; ``N.compact`` holds every entry up to batch N."""
    files = []
    for f in os.listdir(directory):
        stem = f.split(".")[0]
        if stem.isdigit() and not f.endswith(".tmp"):
            files.append((int(stem), os.path.join(directory, f)))
    for batch, path in sorted(files):
        with open(path) as fh:
            lines = fh.read().splitlines()[1:]  # the first line is the log's version
        yield batch, [json.loads(x) for x in lines if x.strip()]


def sink_batches(out_dir: str) -> Dict[str, int]:
    """Output file name -> the micro-batch that wrote it, from the Parquet sink's log. A compacted entry belongs to
    the first batch whose log names it (the batch logs before a compaction stay for 10 minutes, longer than a run)."""
    batch_of: Dict[str, int] = {}
    for batch, entries in _log_entries(os.path.join(out_dir, "_spark_metadata")):
        for e in entries:
            batch_of.setdefault(os.path.basename(e["path"]), batch)
    return batch_of


def source_batches(checkpoint: str, source: int = 0) -> Dict[str, int]:
    """Input file name -> the micro-batch that read it, from the file source's log in the checkpoint."""
    batch_of: Dict[str, int] = {}
    for _, entries in _log_entries(os.path.join(checkpoint, "sources", str(source))):
        for e in entries:
            batch_of[os.path.basename(e["path"])] = int(e["batchId"])
    return batch_of


def _read_output(step: Step, columns: List[str]):
    """The step's output rows (flattened) with the batch that wrote each, flush keys left out."""
    written = sink_batches(step.out)
    parts = []
    for name, batch in written.items():
        t = pq.read_table(os.path.join(step.out, name)).flatten().to_pandas()
        t["batch"] = batch
        t["file"] = name
        parts.append(t)
    import pandas as pd

    df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns + ["batch", "file"])
    df = df[~ev.is_flush(df["key"].astype(str))].copy()
    for c in ("window.start", "window.end"):
        if c in df.columns:
            df[c[len("window.") :]] = df[c].values.astype("datetime64[ms]").astype("int64")
    return df


def final_rows(steps: List[Step]):
    df = _read_output(steps[-1], ROW_COLUMNS)
    rows = df[ROW_COLUMNS].copy()
    for c in ("count", "tier_sum", "last_seq"):
        rows[c] = rows[c].astype("int64")
    return rows.sort_values(["key", "start"], kind="stable").reset_index(drop=True)


def delays(steps: List[Step], records_per_file: int) -> Dict[str, Any]:
    """Per final row: from the start of the micro-batch that read its last input record (``last_seq``) to the end
    of the micro-batch that wrote it (when the sink committed it), in seconds and in micro-batches. In one query
    the batches are the output batch minus the arrival batch; through the split pipeline, each step's batches the
    record's path spent (batch out minus batch in) plus one per hand-over to the next query."""
    finals = _read_output(steps[-1], ROW_COLUMNS)
    if finals.empty:
        return {"rows": 0}
    first, last = steps[0], steps[-1]
    arrival_batch_of_file = source_batches(first.checkpoint)
    arrival = np.array(
        [arrival_batch_of_file[f"part-{int(s) // records_per_file:05d}.parquet"] for s in finals["last_seq"]]
    )
    out_batch = finals["batch"].to_numpy()
    first_times, last_times = first.times(), last.times()
    seconds = np.array([last_times[o][1] - first_times[a][0] for a, o in zip(arrival, out_batch)])
    if len(steps) == 1:
        batches = out_batch - arrival
    else:
        joined, updates = steps[0], steps[1]
        # the join's output row of the last record, the batch that wrote it and the aggregation's batch that read it
        j = _read_output(joined, [])[["seq", "batch", "file"]].set_index("seq")
        j_out = j.loc[finals["last_seq"].to_numpy()]
        agg_in_of = source_batches(updates.checkpoint)
        agg_in = np.array([agg_in_of[f] for f in j_out["file"]])
        # the aggregation's last update of each window (the one the suppress lets out) and its batch
        u = _read_output(updates, [])
        u = u.sort_values("batch", kind="stable").groupby(["key", "start"]).last()
        u_last = u.loc[list(zip(finals["key"], finals["start"]))]
        sup_in_of = source_batches(last.checkpoint)
        sup_in = np.array([sup_in_of[f] for f in u_last["file"]])
        batches = (
            (j_out["batch"].to_numpy() - arrival) + 1 + (u_last["batch"].to_numpy() - agg_in) + 1 + (out_batch - sup_in)
        )
    return {"rows": int(len(finals)), "batches": _stats(batches), "seconds": _stats(seconds)}


def _stats(values) -> Dict[str, float]:
    v = np.asarray(values, dtype=float)
    return {
        "median": round(float(np.median(v)), 3),
        "p95": round(float(np.percentile(v, 95)), 3),
        "max": round(float(v.max()), 3),
    }


def _summary(steps: List[Step], first_start: float) -> Dict[str, Any]:
    ends = [max(e for _, e in s.times().values()) for s in steps]
    batches = [b for s in steps for b in s.batches()]
    data = [p for p in batches if int(p.get("numInputRows", 0)) > ev.FLUSH_KEYS]
    state = StateSnapshot()
    for s in steps:  # the peak of each step's state
        snaps = [StateSnapshot.of(p) for p in s.batches()]
        peak = max(snaps, key=lambda x: x.rows, default=StateSnapshot())
        state.rows += peak.rows
        state.current_version_bytes += peak.current_version_bytes
    return {
        "seconds": round(max(ends) - first_start, 3),
        "wall_seconds_until_stopped": None,  # filled by the caller
        "processing_seconds": round(sum(p["durationMs"]["triggerExecution"] for p in batches) / 1000, 3),
        "data_batch_seconds": round(sum(p["durationMs"]["triggerExecution"] for p in data) / 1000, 3),
        "batches": len(batches),
        "data_batches": len(data),
        "input_rows": steps[0].rows_read(),
        "first_data_batch_seconds": round(data[0]["durationMs"]["triggerExecution"] / 1000, 3) if data else 0.0,
        "peak_state_rows": state.rows,
        "peak_state_bytes": state.current_version_bytes,
        "steps": [
            {
                "step": s.name,
                "batches": len(s.batches()),
                "rows_read": s.rows_read(),
                "started_after_s": round(s.started - first_start, 3),
                "finished_after_s": round(e - first_start, 3),
            }
            for s, e in zip(steps, ends)
        ],
    }


def _merge(parts: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    """One breakdown of several queries: numbers summed, operator timings named by their step."""
    out: Dict[str, Any] = {"phases": {}}
    for step, b in parts.items():
        for k, v in (b.get("phases") or {}).items():
            out["phases"][k] = out["phases"].get(k, 0) + v
        for group in ("map", "result"):
            g = b.get(group)
            if not g:
                continue
            merged = out.setdefault(group, {"operator_metrics": {}})
            for k, v in g.items():
                if k == "operator_metrics":
                    for name, value in v.items():
                        merged["operator_metrics"][f"{step} {name}"] = value
                else:
                    merged[k] = merged.get(k, 0) + v
        if b.get("error"):
            out["error"] = b["error"]
    for group in ("map", "result"):
        if group in out:
            ops = out[group]["operator_metrics"]
            out[group]["operator_metrics"] = dict(
                sorted(ops.items(), key=lambda kv: -kv[1] if kv[0].endswith("(ms)") else 0)
            )
    out["steps"] = parts
    return out


def measure_once(
    ctx: Context, system: str, inputs_: Tuple[str, str], run_dir: str, shape, keep_rows: bool = False
) -> Dict[str, Any]:
    shutil.rmtree(run_dir, ignore_errors=True)
    started = time.time()
    steps = RUNNERS[system](ctx, inputs_, run_dir, shape)
    stopped = time.time() - started
    run = _summary(steps, started)
    run["wall_seconds_until_stopped"] = round(stopped, 3)
    breakdowns = {s.name: {"phases": profile.phases(s.progress)} for s in steps}
    if ctx.event_log is not None:
        logged = ctx.event_log.breakdowns([str(s.query.runId) for s in steps])
        for s in steps:
            breakdowns[s.name].update(logged[str(s.query.runId)])
    run["breakdown"] = breakdowns[steps[0].name] if len(steps) == 1 else _merge(breakdowns)
    run["delay"] = delays(steps, shape.records_per_file)
    if keep_rows:
        run["rows"] = final_rows(steps)
    shutil.rmtree(run_dir, ignore_errors=True)
    return run


# ---- the benchmark -------------------------------------------------------------------------------------------


def check_same_rows(rows: Dict[str, Any], records: int) -> Dict[str, Any]:
    a, b = rows["split"], rows["one-query"]
    check: Dict[str, Any] = {
        "rows": {n: int(len(r)) for n, r in rows.items()},
        "counted_records": {n: int(r["count"].sum()) for n, r in rows.items()},
        "input_records": records,
    }
    merged = a.merge(b, on=["key", "start", "end"], how="outer", suffixes=("_split", "_one"), indicator=True)
    differ = merged["_merge"] != "both"
    for c in ("count", "tier_sum", "last_seq"):
        differ |= merged[f"{c}_split"] != merged[f"{c}_one"]
    check["differing_rows"] = int(differ.sum())
    check["first_differences"] = merged[differ].head(5).astype(str).to_dict("records")
    check["same_final_rows"] = bool(
        check["differing_rows"] == 0 and len(b) > 0 and all(c == records for c in check["counted_records"].values())
    )
    return check


def run(ctx: Context) -> Dict[str, Any]:
    s, shape = ctx.settings, ctx.settings.chains
    main_inputs = inputs(ctx, shape)
    systems = ["split", "one-query"]
    if s.warmup is not None:
        warm = inputs(ctx, s.warmup)
        for name in systems:
            log(f"warm-up: {name}")
            measure_once(ctx, name, warm, ctx.scratch(NAME, "warmup", name), s.warmup)
    runs: Dict[str, List[Dict[str, Any]]] = {n: [] for n in systems}
    rows: Dict[str, Any] = {}
    for r in range(s.repeats):
        for name in systems:
            last = r == s.repeats - 1
            result = measure_once(ctx, name, main_inputs, ctx.scratch(NAME, name), shape, last)
            if last:
                rows[name] = result.pop("rows")
            runs[name].append(result)
            d = result["delay"]
            log(
                f"{name} run {r + 1}/{s.repeats}: {result['seconds']:.2f} s, {shape.records / result['seconds']:,.0f} "
                f"records/s; delay median {d['seconds']['median']} s / {d['batches']['median']} batches"
            )
    records = []
    for name in systems:
        order = sorted(range(len(runs[name])), key=lambda i: runs[name][i]["seconds"])
        median = order[(len(order) - 1) // 2]
        seconds = statistics.median(x["seconds"] for x in runs[name])
        chosen = runs[name][median]
        records.append(
            {
                "system": name,
                "label": LABELS[name],
                "role": "anchor" if name == "split" else "library",
                "records": shape.records,
                "seconds": round(seconds, 3),
                "records_per_s": round(shape.records / seconds, 1),
                "runs": [{k: v for k, v in x.items() if k != "breakdown"} for x in runs[name]],
                "breakdown_run": median,
                "breakdown": chosen["breakdown"],
                "delay": chosen["delay"],
                "peak_state_bytes": chosen["peak_state_bytes"],
            }
        )
        log_breakdown(name, SimpleNamespace(breakdown=chosen["breakdown"], seconds=chosen["seconds"]))
    split, one = records
    one["time_ratio_to_anchor"] = round(one["seconds"] / split["seconds"], 4)
    split["time_ratio_to_anchor"] = 1.0
    check = check_same_rows(rows, shape.records)
    log(f"{NAME}: same final rows: {check['same_final_rows']}")
    return {
        "title": "Chain join -> windowed aggregation -> suppress: one query vs three",
        "params": {
            "records": shape.records,
            "keys": shape.keys,
            "records_per_file": shape.records_per_file,
            "window_ms": s.window_ms,
            "grace_ms": s.chains_grace_ms,
            "history_retention_ms": s.join_history_retention_ms,
            "table_version_interval_ms": s.join_table_version_interval_ms,
            "split_grace_ms": int(split_grace(shape).total_seconds() * 1000),
            "split_max_files_per_trigger": SHUFFLE_PARTITIONS,
        },
        "definitions": {
            "seconds": "from starting the first query to the end of the micro-batch that wrote the last final row",
            "delay": "per final row, from the start of the micro-batch that read its last input record (max seq) "
            "to the end of the micro-batch that wrote the row; batches: in one query, output batch minus "
            "arrival batch; split, per step batch out minus batch in, plus one per hand-over",
        },
        "systems": records,
        "check": check,
        "targets": [target("one query: time ratio to the split pipeline", one["time_ratio_to_anchor"], "<=", 0.6)],
    }
