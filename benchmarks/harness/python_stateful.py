"""Benchmark: the final-results and rate-limiting jobs in each of PySpark's stateful APIs, beside spark-suppress.

PySpark 4 has three ways to keep state per group: ``applyInPandasWithState`` (Spark 3.4), and Spark 4's
``transformWithStateInPandas`` and the Row-based ``transformWithState`` (4.1). The last two run on the RocksDB state
store only, so they get it; spark-suppress and ``applyInPandasWithState`` keep the session's default store, as in
``final_results`` and ``rate_limit``. The jobs, their floors and their checks are those of ``final_results`` (every
system the same final rows) and ``rate_limit`` (every system's output equal to the exact rule for its sharding).
"""

from __future__ import annotations

from typing import Any, Dict, List

from . import events as ev
from . import floors, pandas_jobs
from .config import EventShape
from .context import Context
from .final_results import library as window_library
from .measure import System, add_ratios, log, measure, target
from .rate_limit import check_outputs, shard_functions
from .rate_limit import floor as rate_limit_floor
from .rate_limit import library as rate_library
from .streaming import SHUFFLE_PARTITIONS, WATERMARK_DELAY, read_files
from .window_kinds import _compare, _rows

NAME = "python_stateful"
# The shared warm-up set is as large as this benchmark's own: warming the Python APIs up on it would double their
# cost. A small set warms the JVM and Python workers as well.
WARMUP = EventShape(records=20_000, keys=1_000, records_per_file=10_000, seed=7)
ALL_APIS = [("applyInPandasWithState", None), ("transformWithStateInPandas", False), ("transformWithState", True)]


def available_apis() -> List:
    """The Python stateful APIs of the running PySpark: Spark 3.5's GroupedData has only applyInPandasWithState."""
    from pyspark.sql import GroupedData

    return [(api, rows) for api, rows in ALL_APIS if hasattr(GroupedData, api)]


APIS = available_apis()
# Of the time each system spends above the job's floor (what any correct system must spend), ours is to be at most
# this share of the Python API's. A plain speed-up would mostly compare the fixed costs both pay.
ABOVE_FLOOR_TARGET = 0.05


def above_floor_ratio(ours: float, theirs: float, floor: float) -> float:
    """Our seconds above the floor over theirs; 0 when ours are at or under the floor (nothing left above it)."""
    return max(ours - floor, 0.0) / max(theirs - floor, 1e-9)


def _events(spark, path: str, columns):
    return read_files(spark, path, ev.EVENT_SCHEMA).select(*columns).withWatermark("ts", WATERMARK_DELAY)


def final_results_systems(ctx: Context) -> List[System]:
    s, shape = ctx.settings, ctx.settings.python_stateful
    out = [
        System(
            "spark-suppress final results",
            "final results: spark-suppress aggregate_windowed(on_window_close)",
            "library",
            lambda p: window_library(ctx.spark, p, s.window_ms, shape.disorder_ms),
        )
    ]
    for api, rows in APIS:
        if rows is None:
            build = lambda p: pandas_jobs.window_counts(_events(ctx.spark, p, ["key", "ts"]), s.window_ms)  # noqa: E731
        else:
            build = (
                lambda rows: (
                    lambda p: pandas_jobs.tws_window_counts(_events(ctx.spark, p, ["key", "ts"]), s.window_ms, rows)
                )
            )(rows)
        out.append(
            System(
                f"{api} final results",
                f"final results: PySpark {api}",
                "python",
                build,
                slow=True,
                conf={} if rows is None else pandas_jobs.ROCKSDB_CONF,
            )
        )
    out.append(
        floors.system(
            ctx,
            "floor final results",
            "final results: floor (partial counts per window and key per micro-batch, no state)",
            ["key", "ts"],
            floors.window_counts(s.window_ms),
        )
    )
    return out


def rate_limit_systems(ctx: Context) -> List[System]:
    s = ctx.settings
    t, m = s.rate_limit_time_limit_ms, s.rate_limit_max_records
    out = [
        System(
            "spark-suppress rate limit",
            f"rate limit: spark-suppress suppress(untilTimeLimit({t} ms, maxRecords({m}).emitEarlyWhenFull()))",
            "library",
            lambda p: rate_library(ctx.spark, p, t, m),
        )
    ]
    columns = ["key", "ts", "value", "seq"]
    for api, rows in APIS:
        if rows is None:
            build = lambda p: pandas_jobs.rate_limited(_events(ctx.spark, p, columns), t, m, SHUFFLE_PARTITIONS)  # noqa: E731
        else:
            build = (
                lambda rows: (
                    lambda p: pandas_jobs.tws_rate_limited(
                        _events(ctx.spark, p, columns), t, m, SHUFFLE_PARTITIONS, rows
                    )
                )
            )(rows)
        out.append(
            System(
                f"{api} rate limit",
                f"rate limit: PySpark {api}, same rule",
                "python",
                build,
                slow=True,
                conf={} if rows is None else pandas_jobs.ROCKSDB_CONF,
            )
        )
    out.append(
        rate_limit_floor(
            ctx,
            "floor rate limit",
            "rate limit: floor (each key's latest update per micro-batch and as many more records as the rule emits)",
            t,
            m,
        )
    )
    return out


def check_final_rows(measured, records: int) -> Dict[str, Any]:
    rows = {n: _rows(m.last.output_path) for n, m in measured.items() if m.system.role != "floor"}
    reference_name = "spark-suppress final results"
    reference = rows[reference_name]
    out: Dict[str, Any] = {
        "rows": {n: int(len(r)) for n, r in rows.items()},
        "counted_records": {n: int(r["count"].sum()) for n, r in rows.items()},
        "input_records": records,
        "differences": {},
    }
    for n, r in rows.items():
        if n != reference_name:
            c = _compare(reference, r, [reference_name, n])
            if c["differing_rows"]:
                out["differences"][n] = c
    out["same_final_rows"] = not out["differences"] and all(c == records for c in out["counted_records"].values())
    return out


def run(ctx: Context) -> Dict[str, Any]:
    s, shape = ctx.settings, ctx.settings.python_stateful
    path = ev.events(ctx.data_dir, shape)
    warmup = None if s.warmup is None else (ev.events(ctx.data_dir, WARMUP), WARMUP.records)
    records: List[Dict[str, Any]] = []
    targets: List[Dict[str, Any]] = []

    final = measure(
        final_results_systems(ctx),
        path,
        shape.records,
        ctx.scratch(NAME, "final"),
        s.repeats,
        s.pandas_repeats,
        warmup=warmup,
        keep_output=True,
        event_log=ctx.event_log,
    )
    final_check = check_final_rows(final, shape.records)
    log(f"{NAME} final results: same final rows: {final_check['same_final_rows']}")

    limit_shape = s.python_stateful_rate_limit
    limit_path = ev.events(ctx.data_dir, limit_shape)
    limit = measure(
        rate_limit_systems(ctx),
        limit_path,
        limit_shape.records,
        ctx.scratch(NAME, "rate_limit"),
        s.repeats,
        s.pandas_repeats,
        warmup=warmup,
        keep_output=True,
        event_log=ctx.event_log,
    )
    limiters = [n for n, m in limit.items() if m.system.role != "floor"]
    limit_check = check_outputs(
        {n: limit[n].last.output_path for n in limiters},
        limit_path,
        s.rate_limit_time_limit_ms,
        s.rate_limit_max_records,
        shard_functions(limiters),
        limit["floor rate limit"].last.output_path,
    )
    log(f"{NAME} rate limit: outputs check: {limit_check['ok']}")

    for job, measured in (("final results", final), ("rate limit", limit)):
        job_records = [m.record() for m in measured.values()]
        add_ratios(job_records, anchor=None, floor=f"floor {job}")
        lib = job_records[0]
        floor = next(r for r in job_records if r["role"] == "floor")
        for r in job_records:
            r["job"] = job
            if r["role"] == "python":
                targets.append(
                    target(
                        f"{job}: time above the floor, ratio to {r['system'][: -len(job) - 1]}'s",
                        above_floor_ratio(lib["seconds"], r["seconds"], floor["seconds"]),
                        "<=",
                        ABOVE_FLOOR_TARGET,
                    )
                )
        records += job_records
    return {
        "title": "PySpark's stateful APIs",
        "params": {
            "records": shape.records,
            "keys": shape.keys,
            "window_ms": s.window_ms,
            "time_limit_ms": s.rate_limit_time_limit_ms,
            "max_records": s.rate_limit_max_records,
            "records_per_file": shape.records_per_file,
            "rate_limit_records": limit_shape.records,
            "rate_limit_keys": limit_shape.keys,
            "rate_limit_records_per_file": limit_shape.records_per_file,
            "watermark_delay": WATERMARK_DELAY,
            "transformWithState_state_store": pandas_jobs.ROCKSDB_CONF["spark.sql.streaming.stateStore.providerClass"],
        },
        "systems": records,
        "check": {
            "same_final_rows": final_check["same_final_rows"],
            "ok": bool(limit_check["ok"]),
            "final_results": final_check,
            "rate_limit": limit_check,
        },
        "targets": targets,
    }
