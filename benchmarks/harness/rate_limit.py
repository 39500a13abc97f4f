"""Benchmark 2: rate limiting, ``suppress(untilTimeLimit(5 s, maxRecords(n).emitEarlyWhenFull()))``.

Against the same rule written with ``applyInPandasWithState`` and against the floor (read, shuffle by key, write).
Both operators bound the buffer per state partition, so which key leaves early can differ where the two shard
keys differently; what must hold for both is that every key's last update is emitted once the flush record has
moved stream time past every time limit, and that no key is emitted more often than it was updated.
"""

from __future__ import annotations

from typing import Any, Dict

import pyarrow.parquet as pq

from . import events as ev
from . import pandas_jobs
from .context import Context
from .final_results import floor_system
from .measure import System, add_ratios, log, measure, target
from .streaming import SHUFFLE_PARTITIONS, WATERMARK_DELAY, read_files

NAME = "rate_limit"


def library(spark, path: str, time_limit_ms: int, max_records: int):
    import spark_suppress as ss
    from spark_suppress import BufferConfig, Suppressed

    return ss.suppress(
        read_files(spark, path, ev.EVENT_SCHEMA).select("key", "ts", "value").withWatermark("ts", WATERMARK_DELAY),
        key="key",
        timestamp="ts",
        suppressed=Suppressed.until_time_limit(
            time_limit_ms, BufferConfig.max_records(max_records).emit_early_when_full()
        ),
    )


def python(spark, path: str, time_limit_ms: int, max_records: int):
    events = read_files(spark, path, ev.EVENT_SCHEMA).withWatermark("ts", WATERMARK_DELAY)
    return pandas_jobs.rate_limited(events, time_limit_ms, max_records, SHUFFLE_PARTITIONS)


def check_outputs(measured, input_dir: str, names=("spark-suppress", "applyInPandasWithState")) -> Dict[str, Any]:
    updates = pq.read_table(input_dir, columns=["key", "value", "seq"]).to_pandas()
    updates = updates[~ev.is_flush(updates["key"])]
    last = updates.sort_values("seq").groupby("key").tail(1)[["key", "value"]]
    per_key_updates = updates.groupby("key").size()
    check: Dict[str, Any] = {"input_records": int(len(updates)), "keys": int(len(last)), "systems": {}}
    ok = True
    for name in names:
        if name not in measured:
            continue
        out = pq.read_table(measured[name].last.output_path, columns=["key", "value"]).to_pandas()
        emitted_last = last.merge(out.drop_duplicates(), on=["key", "value"], how="left", indicator=True)
        missing = int((emitted_last["_merge"] != "both").sum())
        per_key = out.groupby("key").size()
        too_many = int((per_key > per_key_updates.reindex(per_key.index).fillna(0)).sum())
        check["systems"][name] = {
            "emitted": int(len(out)),
            "last_update_missing": missing,
            "keys_emitted_more_than_updated": too_many,
        }
        ok = ok and missing == 0 and too_many == 0
    check["ok"] = ok
    return check


def run(ctx: Context) -> Dict[str, Any]:
    s, shape = ctx.settings, ctx.settings.rate_limit
    path = ev.events(ctx.data_dir, shape)
    t, m = s.rate_limit_time_limit_ms, s.rate_limit_max_records
    chosen = [
        System(
            "spark-suppress",
            f"spark-suppress suppress(untilTimeLimit({t} ms, maxRecords({m}).emitEarlyWhenFull()))",
            "library",
            lambda p: library(ctx.spark, p, t, m),
        ),
        System(
            "applyInPandasWithState",
            "PySpark applyInPandasWithState, same rule",
            "python",
            lambda p: python(ctx.spark, p, t, m),
            slow=True,
        ),
    ]
    reuse_floor = ctx.shared.get(("floor", shape))
    if reuse_floor is None:
        chosen.append(floor_system(ctx))
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
    if reuse_floor is not None:
        measured["floor"] = reuse_floor
    records = [m_.record() for m_ in measured.values()]
    add_ratios(records, anchor=None, floor="floor")
    check = check_outputs(measured, path)
    log(f"{NAME}: outputs check: {check['ok']}")
    lib = next(r for r in records if r["system"] == "spark-suppress")
    py = next(r for r in records if r["system"] == "applyInPandasWithState")
    return {
        "title": "Rate limiting (suppress untilTimeLimit + maxRecords + emit early)",
        "params": {
            "records": shape.records,
            "keys": shape.keys,
            "time_limit_ms": t,
            "max_records": m,
            "records_per_file": shape.records_per_file,
            "watermark_delay": WATERMARK_DELAY,
            "floor_reused_from": "final_results" if reuse_floor is not None else None,
        },
        "systems": records,
        "check": check,
        "targets": [target("speed-up over applyInPandasWithState", py["seconds"] / lib["seconds"], ">=", 50, "x")],
    }
