"""Benchmark 4: how cost grows with records (1e5 -> 1e7) and with distinct keys (1e3 -> 1e6).

For suppress (``untilTimeLimit(30 s, unbounded())``: one state row per buffered key) and for the windowed
aggregation (``aggregate_windowed(on_window_close)``, when this build has it): time per record, and state bytes
per buffered key from Spark's state metrics at the last data batch (before the flush record empties the state),
with the part that is not the user's own key and value bytes.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List

from . import events as ev
from . import state_bytes
from .config import EventShape
from .context import Context, library_has
from .final_results import library as aggregation_job
from .measure import log, target
from .streaming import WATERMARK_DELAY, read_files, run_query

NAME = "scaling"
KEY_BYTES = 8  # "k" + 7 digits: every key name of the event sets used here
LONG_BYTES = 8


def suppress_job(spark, path: str, time_limit_ms: int):
    import spark_suppress as ss
    from spark_suppress import BufferConfig, Suppressed

    return ss.suppress(
        read_files(spark, path, ev.EVENT_SCHEMA).select("key", "ts", "value").withWatermark("ts", WATERMARK_DELAY),
        key="key",
        timestamp="ts",
        suppressed=Suppressed.until_time_limit(time_limit_ms, BufferConfig.unbounded()),
    )


def _systems(ctx: Context) -> List[Dict[str, Any]]:
    s = ctx.settings
    out = [{
        "system": "suppress",
        "label": f"suppress(untilTimeLimit({s.suppress_time_limit_ms} ms, unbounded()))",
        "build": lambda p: suppress_job(ctx.spark, p, s.suppress_time_limit_ms),
        # the buffered row: key, ts, value
        "user_bytes_per_key": KEY_BYTES + 2 * LONG_BYTES,
    }]
    if library_has("aggregate_windowed"):
        out.append({
            "system": "aggregate_windowed",
            "label": "aggregate_windowed(count, on_window_close)",
            "build": lambda p: aggregation_job(ctx.spark, p, s.window_ms, s.final_results.disorder_ms),
            # the key and one count per open window
            "user_bytes_per_key": KEY_BYTES + LONG_BYTES,
        })
    return out


def _point(ctx: Context, system: Dict[str, Any], records: int, keys: int) -> Dict[str, Any]:
    shape = EventShape(records=records, keys=keys, records_per_file=ctx.settings.scaling_records_per_file)
    path = ev.events(ctx.data_dir, shape)
    run = run_query(system["build"](path), ctx.scratch(NAME, system["system"]), records,
                    inspect=lambda checkpoint, batch: state_bytes.encoded(ctx.spark, checkpoint, batch))
    st = run.state
    buffered = max(st.rows, 1)
    memory_per_key = st.current_version_bytes / buffered
    encoded = run.inspected or {}
    encoded_per_key = encoded.get("key_bytes_per_row", 0.0) + encoded.get("value_bytes_per_row", 0.0)
    point = {
        "records": records,
        "keys": keys,
        "seconds": round(run.seconds, 3),
        "records_per_s": round(records / run.seconds, 1),
        "us_per_record": round(run.seconds / records * 1e6, 3),
        "steady_us_per_record": round(run.data_batch_seconds / records * 1e6, 3),
        "data_batches": run.data_batches,
        "buffered_keys": st.rows,
        "state_memory_bytes": st.current_version_bytes,
        "state_memory_bytes_per_key": round(memory_per_key, 1),
        "state_encoded_bytes_per_key": round(encoded_per_key, 1),
        "user_bytes_per_key": system["user_bytes_per_key"],
        "state_overhead_bytes_per_key": round(memory_per_key - system["user_bytes_per_key"], 1),
        "encoded_overhead_bytes_per_key": round(encoded_per_key - system["user_bytes_per_key"], 1),
        "run": run.summary(),
    }
    log(f"{NAME} {system['system']} records={records:,} keys={keys:,}: {point['us_per_record']} us/record "
        f"({point['steady_us_per_record']} steady), {point['state_memory_bytes_per_key']} B/key in memory, "
        f"{point['state_encoded_bytes_per_key']} B/key encoded")
    return point


def _flatness(points: List[Dict[str, Any]], fixed_keys: int, field: str) -> float:
    along_records = [p[field] for p in points if p["keys"] == fixed_keys]
    return max(along_records) / min(along_records) if len(along_records) > 1 else 1.0


def run(ctx: Context) -> Dict[str, Any]:
    s = ctx.settings
    warm = ctx.warmup()
    systems = _systems(ctx)
    for system in systems if warm else []:
        log(f"warm-up: {NAME} {system['system']}")
        run_query(system["build"](warm[0]), ctx.scratch(NAME, "warmup"), warm[1])
    curves: List[Dict[str, Any]] = []
    targets: List[Dict[str, Any]] = []
    for system in systems:
        points = [_point(ctx, system, r, k) for r, k in s.scaling_points()]
        curves.append({"system": system["system"], "label": system["label"],
                       "user_bytes_per_key": system["user_bytes_per_key"], "points": points})
        name = system["system"]
        targets.append(target(f"{name}: steady time per record, max/min from {min(s.scaling_records):,} to "
                              f"{max(s.scaling_records):,} records", _flatness(points, s.scaling_fixed_keys,
                                                                               "steady_us_per_record"), "<=", 1.25))
        targets.append(target(f"{name}: state bytes per buffered key beyond the user's key and value (in memory)",
                              max(p["state_overhead_bytes_per_key"] for p in points), "<", 200, "bytes"))
    result: Dict[str, Any] = {
        "title": "Scaling with records and keys",
        "params": {"records": s.scaling_records, "keys": s.scaling_keys, "fixed_keys": s.scaling_fixed_keys,
                   "fixed_records": s.scaling_fixed_records, "records_per_file": s.scaling_records_per_file,
                   "suppress_time_limit_ms": s.suppress_time_limit_ms, "window_ms": s.window_ms},
        "curves": curves,
        "targets": targets,
    }
    if not library_has("aggregate_windowed"):
        result["skipped_systems"] = {"aggregate_windowed": "aggregate_windowed is not in this build of spark_suppress"}
    return result
