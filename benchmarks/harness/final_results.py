"""Benchmark 1: final results per window and key (count per key and 10-second tumbling window).

Systems, all on the same event set: Spark's ``groupBy(window, key).count()`` in append mode (the anchor),
``aggregate_windowed(..., EmitStrategy.on_window_close())``, the same job with ``applyInPandasWithState``, and
the floor (floors.py: each micro-batch's counts per window and key, the partial counts shuffled, no state). The three
aggregations must produce the same final rows.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Dict, List

import pyarrow.parquet as pq

from . import events as ev
from . import floors, pandas_jobs
from .context import Context, library_has
from .measure import Measured, System, add_ratios, log, measure, target
from .streaming import WATERMARK_DELAY, read_files, watermarked_events

NAME = "final_results"

# The columns every compared system writes. Ours also has Kafka's result timestamp (``ts``, the window's largest
# record time), which neither Spark's aggregation nor the pandas jobs produce: it is selected away, as a user who does
# not need it would, and Spark then does not build it (its column pruning reaches the operator's output serializer).
RESULT_COLUMNS = ("key", "window", "count")


def native(spark, path: str, window_ms: int):
    from pyspark.sql import functions as F

    return (
        read_files(spark, path, ev.EVENT_SCHEMA)
        .withWatermark("ts", WATERMARK_DELAY)
        .groupBy(F.window("ts", f"{window_ms // 1000} seconds"), "key")
        .count()
    )


def library(spark, path: str, window_ms: int, disorder_ms: int):
    from pyspark.sql import functions as F

    import spark_suppress as ss

    return ss.aggregate_windowed(
        watermarked_events(spark, path),
        key="key",
        timestamp="ts",
        # Grace = the disorder: records of a window that arrive within a micro-batch after newer ones still count.
        windows=ss.TimeWindows.of_size_and_grace(
            timedelta(milliseconds=window_ms), timedelta(milliseconds=disorder_ms)
        ),
        aggregations=[F.count("*").alias("count")],
        emit=ss.EmitStrategy.on_window_close(),
    ).select(*RESULT_COLUMNS)


def python(spark, path: str, window_ms: int):
    return pandas_jobs.window_counts(watermarked_events(spark, path), window_ms)


def floor_system(ctx: Context) -> System:
    return floors.system(
        ctx,
        "floor",
        "floor: counts per window and key of each micro-batch (partial counts shuffled), no state",
        ["key", "ts"],
        floors.window_counts(ctx.settings.window_ms),
    )


def systems(ctx: Context) -> List[System]:
    s, shape = ctx.settings, ctx.settings.final_results
    out = [
        System(
            "spark-native",
            "Spark groupBy(window, key).count(), append mode",
            "anchor",
            lambda p: native(ctx.spark, p, s.window_ms),
        )
    ]
    if library_has("aggregate_windowed"):
        out.append(
            System(
                "spark-suppress",
                "spark-suppress aggregate_windowed(on_window_close)",
                "library",
                lambda p: library(ctx.spark, p, s.window_ms, shape.disorder_ms),
            )
        )
    out.append(
        System(
            "applyInPandasWithState",
            "PySpark applyInPandasWithState",
            "python",
            lambda p: python(ctx.spark, p, s.window_ms),
            slow=True,
        )
    )
    out.append(floor_system(ctx))
    return out


def _final_rows(path: str, system: str):
    """The output as (key, window start ms, window end ms, count), sorted, without the flush record's windows."""
    table = pq.read_table(path)
    if system == "applyInPandasWithState":
        df = table.select(["key", "window_start", "window_end", "count"]).to_pandas()
        df.columns = ["key", "start", "end", "count"]
    else:
        flat = table.flatten().to_pandas()
        df = flat[["key", "window.start", "window.end", "count"]].copy()
        df.columns = ["key", "start", "end", "count"]
    df = df[~ev.is_flush(df["key"])]
    for c in ("start", "end"):
        df[c] = df[c].values.astype("datetime64[ms]").astype("int64")
    df["count"] = df["count"].astype("int64")
    return df.sort_values(["key", "start"], kind="stable").reset_index(drop=True)


def check_same_rows(measured: Dict[str, Measured], records: int) -> Dict[str, Any]:
    names = [n for n in ("spark-native", "spark-suppress", "applyInPandasWithState") if n in measured]
    rows = {n: _final_rows(measured[n].last.output_path, n) for n in names}
    reference = rows["spark-native"]
    check: Dict[str, Any] = {
        "systems": names,
        "rows": {n: len(r) for n, r in rows.items()},
        "counted_records": {n: int(r["count"].sum()) for n, r in rows.items()},
        "input_records": records,
        "differences": {},
    }
    for n in names[1:]:
        other = rows[n]
        if len(other) != len(reference) or not (other.values == reference.values).all():
            merged = reference.merge(
                other, on=["key", "start", "end"], how="outer", suffixes=("_native", f"_{n}"), indicator=True
            )
            diff = merged[(merged["_merge"] != "both") | (merged["count_native"] != merged[f"count_{n}"])]
            check["differences"][n] = {"rows": int(len(diff)), "first": diff.head(5).astype(str).to_dict("records")}
    check["same_final_rows"] = not check["differences"] and all(c == records for c in check["counted_records"].values())
    return check


def run(ctx: Context) -> Dict[str, Any]:
    s, shape = ctx.settings, ctx.settings.final_results
    path = ev.events(ctx.data_dir, shape)
    chosen = systems(ctx)
    measured = measure(
        chosen,
        path,
        shape.records,
        ctx.scratch(NAME),
        s.repeats,
        s.pandas_repeats,
        warmup=ctx.warmup(),
        keep_output=True,
        event_log=ctx.event_log,
    )
    records = [m.record() for m in measured.values()]
    add_ratios(records, anchor="spark-native", floor="floor")
    check = check_same_rows(measured, shape.records)
    log(f"{NAME}: same final rows: {check['same_final_rows']}")
    result: Dict[str, Any] = {
        "title": "Final results per window and key",
        "params": {
            "records": shape.records,
            "keys": shape.keys,
            "window_ms": s.window_ms,
            "disorder_ms": shape.disorder_ms,
            "records_per_file": shape.records_per_file,
            "watermark_delay": WATERMARK_DELAY,
            "seed": shape.seed,
        },
        "systems": records,
        "check": check,
        "targets": [],
    }
    if "spark-suppress" not in measured:
        result["skipped_systems"] = {"spark-suppress": "aggregate_windowed is not in this build of spark_suppress"}
        return result
    lib = next(r for r in records if r["system"] == "spark-suppress")
    result["targets"] = [
        target("time ratio to Spark's append-mode aggregation", lib["time_ratio_to_anchor"], "<=", 0.8),
        target("time ratio to the floor", lib["time_ratio_to_floor"], "<=", 1.3),
    ]
    if "applyInPandasWithState" in measured:
        py = next(r for r in records if r["system"] == "applyInPandasWithState")
        result["targets"].append(
            target("speed-up over applyInPandasWithState", py["seconds"] / lib["seconds"], ">=", 50, "x")
        )
    return result
