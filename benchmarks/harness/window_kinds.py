"""Benchmark: final results (``on_window_close``) of every window kind besides tumbling, on events shaped as
``final_results``' (a quarter as many in a full run).

- hopping (size 10 s, advance 1 s: ten windows per record) against Spark's ``groupBy(window(ts, "10 seconds",
  "1 second"), key).count()``, append mode;
- sessions (5 s gap) against Spark's ``groupBy(session_window(ts, "5 seconds"), key).count()``, append mode;
- Kafka's sliding windows (10 s time difference), which Spark has no operator for, against the same windows in
  ``applyInPandasWithState``.

Each job also has its floor (floors.py): hopping, each micro-batch's partial counts per key and 1-second pane,
shuffled and written (fewer rows than the windows); sessions, each key's first and last time and count per
micro-batch; sliding, counts per key and timestamp per micro-batch. None keeps state.

Checks. Hopping: the same rows as Spark (the window definitions coincide). Sessions: the same rows except for keys
where two consecutive records are exactly one gap apart, which Kafka's rule joins into one session (the gap bound
is inclusive) and ``session_window`` does not (its windows ``[ts, ts + gap)`` do not overlap there); the check
names those keys and leaves them out. Sliding: the same rows as the pandas job, and every count equal to the
records of the key inside the window, counted straight from the input.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Dict, List

import numpy as np
import pyarrow.parquet as pq

from . import events as ev
from . import floors, pandas_jobs
from .context import Context
from .final_results import RESULT_COLUMNS
from .measure import Measured, System, add_ratios, log, measure, target
from .streaming import WATERMARK_DELAY, watermarked_events

NAME = "window_kinds"
HOP_SIZE_MS, HOP_ADVANCE_MS = 10_000, 1_000
SESSION_GAP_MS = 5_000
SLIDING_DIFFERENCE_MS = 10_000


def native_hopping(spark, path: str):
    from pyspark.sql import functions as F

    return (
        watermarked_events(spark, path)
        .groupBy(F.window("ts", f"{HOP_SIZE_MS // 1000} seconds", f"{HOP_ADVANCE_MS // 1000} second"), "key")
        .count()
    )


def native_sessions(spark, path: str):
    from pyspark.sql import functions as F

    return (
        watermarked_events(spark, path)
        .groupBy(F.session_window("ts", f"{SESSION_GAP_MS // 1000} seconds"), "key")
        .count()
    )


def library(spark, path: str, windows):
    from pyspark.sql import functions as F

    import spark_suppress as ss

    return ss.aggregate_windowed(
        watermarked_events(spark, path),
        key="key",
        timestamp="ts",
        windows=windows,
        aggregations=[F.count("*").alias("count")],
        emit=ss.EmitStrategy.on_window_close(),
    ).select(*RESULT_COLUMNS)


def library_windows(kind: str, grace_ms: int):
    import spark_suppress as ss

    grace = timedelta(milliseconds=grace_ms)
    if kind == "hopping":
        return ss.TimeWindows.of_size_and_grace(timedelta(milliseconds=HOP_SIZE_MS), grace).advance_by(
            timedelta(milliseconds=HOP_ADVANCE_MS)
        )
    if kind == "sessions":
        return ss.SessionWindows.of_inactivity_gap_and_grace(timedelta(milliseconds=SESSION_GAP_MS), grace)
    return ss.SlidingWindows.of_time_difference_and_grace(timedelta(milliseconds=SLIDING_DIFFERENCE_MS), grace)


def systems(ctx: Context, kind: str) -> List[System]:
    grace = ctx.settings.window_kinds.disorder_ms
    lib = System(
        f"spark-suppress {kind}",
        f"{kind}: spark-suppress aggregate_windowed(on_window_close)",
        "library",
        lambda p: library(ctx.spark, p, library_windows(kind, grace)),
    )
    if kind == "hopping":
        return [
            System(
                "spark-native hopping",
                "hopping: Spark groupBy(window(ts, 10 s, 1 s), key).count(), append",
                "anchor",
                lambda p: native_hopping(ctx.spark, p),
            ),
            lib,
            floors.system(
                ctx,
                "floor hopping",
                "hopping: floor (partial counts per key and pane shuffled and written, no state)",
                ["key", "ts"],
                floors.hopping_pane_counts(HOP_ADVANCE_MS),
            ),
        ]
    if kind == "sessions":
        return [
            System(
                "spark-native sessions",
                "sessions: Spark groupBy(session_window(ts, 5 s), key).count(), append",
                "anchor",
                lambda p: native_sessions(ctx.spark, p),
            ),
            lib,
            floors.system(
                ctx,
                "floor sessions",
                "sessions: floor (each key's span per micro-batch, no state)",
                ["key", "ts"],
                floors.per_key_span,
            ),
        ]
    return [
        lib,
        System(
            "applyInPandasWithState sliding",
            "sliding: PySpark applyInPandasWithState, same windows",
            "python",
            lambda p: pandas_jobs.sliding_counts(watermarked_events(ctx.spark, p), SLIDING_DIFFERENCE_MS),
            slow=True,
        ),
        floors.system(
            ctx,
            "floor sliding",
            "sliding: floor (counts per key and timestamp, no state)",
            ["key", "ts"],
            floors.per_key_and_time,
        ),
    ]


def _rows(path: str) -> "Any":
    """(key, start ms, end ms, count) sorted, without the flush records' windows; end exclusive for every system."""
    flat = pq.read_table(path).flatten().to_pandas()
    # Spark names the struct after its function (window, session_window); the pandas jobs flatten it.
    start = next(c for c in flat.columns if c.endswith(".start") or c == "window_start")
    df = flat[["key", start, start[: -len("start")] + "end", "count"]].copy()
    df.columns = ["key", "start", "end", "count"]
    df = df[~ev.is_flush(df["key"])]
    for c in ("start", "end"):
        df[c] = df[c].values.astype("datetime64[ms]").astype("int64")
    df["count"] = df["count"].astype("int64")
    return df.sort_values(["key", "start", "end"], kind="stable").reset_index(drop=True)


def _compare(reference, other, names) -> Dict[str, Any]:
    merged = reference.merge(other, on=["key", "start", "end"], how="outer", suffixes=("_a", "_b"), indicator=True)
    diff = merged[(merged["_merge"] != "both") | (merged["count_a"] != merged["count_b"])]
    return {
        "compared": list(names),
        "rows": [int(len(reference)), int(len(other))],
        "differing_rows": int(len(diff)),
        "first_differences": diff.head(5).astype(str).to_dict("records"),
    }


def _exact_gap_keys(input_dir: str, gap_ms: int) -> set:
    """Keys with two consecutive records exactly ``gap_ms`` apart: one session for Kafka, two for Spark."""
    t = pq.read_table(input_dir, columns=["key", "ts"]).to_pandas()
    t = t[~ev.is_flush(t["key"])]
    t["ms"] = t["ts"].values.astype("datetime64[ms]").astype("int64")
    t = t.sort_values(["key", "ms"], kind="stable")
    gaps = t.groupby("key")["ms"].diff()
    return set(t.loc[gaps == gap_ms, "key"])


def _sliding_counts_hold(rows, input_dir: str) -> int:
    """Rows whose count is not the number of the key's records in [start, end) (end exclusive here)."""
    t = pq.read_table(input_dir, columns=["key", "ts"]).to_pandas()
    t = t[~ev.is_flush(t["key"])]
    t["ms"] = t["ts"].values.astype("datetime64[ms]").astype("int64")
    by_key = {k: np.sort(g.to_numpy()) for k, g in t.groupby("key")["ms"]}
    wrong = 0
    for key, g in rows.groupby("key"):
        ms = by_key.get(key, np.empty(0, dtype=np.int64))
        n = np.searchsorted(ms, g["end"].to_numpy(), "left") - np.searchsorted(ms, g["start"].to_numpy(), "left")
        wrong += int((n != g["count"].to_numpy()).sum())
    return wrong


def check(kind: str, measured: Dict[str, Measured], input_dir: str, records: int) -> Dict[str, Any]:
    names = [s for s in measured if not s.startswith("floor")]
    rows = {n: _rows(measured[n].last.output_path) for n in names}
    lib = rows[f"spark-suppress {kind}"]
    other_name = next(n for n in names if not n.startswith("spark-suppress"))
    other = rows[other_name]
    out: Dict[str, Any] = {"rows": {n: int(len(r)) for n, r in rows.items()}}
    if kind == "sessions":
        excluded = _exact_gap_keys(input_dir, SESSION_GAP_MS)
        out["keys_left_out_semantics_differ"] = len(excluded)
        out["why_left_out"] = (
            "two consecutive records exactly one gap apart: Kafka's inclusive gap makes one session, session_window two"
        )
        lib, other = lib[~lib["key"].isin(excluded)], other[~other["key"].isin(excluded)]
        out["counted_records"] = {n: int(r[~r["key"].isin(excluded)]["count"].sum()) for n, r in rows.items()}
    comparison = _compare(
        other.reset_index(drop=True), lib.reset_index(drop=True), [other_name, f"spark-suppress {kind}"]
    )
    out["comparison"] = comparison
    ok = comparison["differing_rows"] == 0 and len(lib) > 0
    if kind == "hopping":
        # ten windows per record, all closed after the flush
        out["expected_counted"] = records * (HOP_SIZE_MS // HOP_ADVANCE_MS)
        out["counted_records"] = {n: int(r["count"].sum()) for n, r in rows.items()}
        ok = ok and all(c == out["expected_counted"] for c in out["counted_records"].values())
    if kind == "sliding":
        out["rows_with_wrong_count"] = {n: _sliding_counts_hold(r, input_dir) for n, r in rows.items()}
        ok = ok and not any(out["rows_with_wrong_count"].values())
    out["same_final_rows"] = bool(ok)
    return out


def run(ctx: Context) -> Dict[str, Any]:
    s, shape = ctx.settings, ctx.settings.window_kinds
    path = ev.events(ctx.data_dir, shape)
    records: List[Dict[str, Any]] = []
    checks: Dict[str, Any] = {}
    targets: List[Dict[str, Any]] = []
    for kind in ("hopping", "sessions", "sliding"):
        measured = measure(
            systems(ctx, kind),
            path,
            shape.records,
            ctx.scratch(NAME, kind),
            s.repeats,
            s.pandas_repeats,
            warmup=ctx.warmup(),
            keep_output=True,
            event_log=ctx.event_log,
        )
        job = [m.record() for m in measured.values()]
        anchor = next((r["system"] for r in job if r["role"] == "anchor"), None)
        add_ratios(job, anchor=anchor, floor=f"floor {kind}")
        for r in job:
            r["job"] = kind
        records += job
        checks[kind] = check(kind, measured, path, shape.records)
        log(f"{NAME} {kind}: same final rows: {checks[kind]['same_final_rows']}")
        lib = next(r for r in job if r["role"] == "library")
        if kind == "hopping":
            targets.append(
                target(
                    "hopping (10 windows per record): time ratio to Spark's window(10 s, 1 s)",
                    lib["time_ratio_to_anchor"],
                    "<=",
                    0.5,
                )
            )
        elif kind == "sessions":
            targets.append(
                target("sessions: time ratio to Spark's session_window", lib["time_ratio_to_anchor"], "<=", 0.8)
            )
        else:
            py = next(r for r in job if r["role"] == "python")
            targets.append(
                target("sliding: speed-up over applyInPandasWithState", py["seconds"] / lib["seconds"], ">=", 20, "x")
            )
    return {
        "title": "Final results of hopping, session and sliding windows",
        "params": {
            "records": shape.records,
            "keys": shape.keys,
            "hopping_size_ms": HOP_SIZE_MS,
            "hopping_advance_ms": HOP_ADVANCE_MS,
            "session_gap_ms": SESSION_GAP_MS,
            "sliding_time_difference_ms": SLIDING_DIFFERENCE_MS,
            "grace_ms": shape.disorder_ms,
            "records_per_file": shape.records_per_file,
            "watermark_delay": WATERMARK_DELAY,
        },
        "systems": records,
        "check": {"same_final_rows": all(c["same_final_rows"] for c in checks.values()), "jobs": checks},
        "targets": targets,
    }
