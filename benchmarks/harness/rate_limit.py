"""Benchmark 2: rate limiting, ``suppress(untilTimeLimit(5 s, maxRecords(n).emitEarlyWhenFull()))``.

Against the same rule written with ``applyInPandasWithState`` and against the floor. Both bound the buffer per
shard but shard keys differently (spark-suppress by its own hash of the encoded key, the pandas job by Spark's
``hash``), so which key leaves early when a buffer is full differs between them. Each system's output is checked
against the exact rule computed for its own sharding (``checks.rate_limit_reference``): which updates leave, with
which values, in which micro-batch.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections import Counter
from typing import Any, Callable, Dict, List, Optional, Tuple

import pyarrow.parquet as pq

from . import checks, floors, pandas_jobs
from . import events as ev
from .context import Context
from .measure import System, add_ratios, log, measure, target
from .streaming import SHUFFLE_PARTITIONS, WATERMARK_DELAY, WATERMARK_DELAY_MS, parquet_rows, read_files

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


def input_batches(input_dir: str) -> List[List[Tuple[str, int, int]]]:
    """The updates (key, ts ms, value) of each micro-batch in arrival order: one file per batch, in name order."""
    return [ev.file_records(path) for path in ev.parquet_files(input_dir)]


@functools.lru_cache(maxsize=None)
def floor_quota(input_dir: str, time_limit_ms: int, max_records: int) -> Tuple[Tuple[int, int], ...]:
    """Per micro-batch, its first ``seq`` and how many of its records the floor writes besides each key's latest
    update (``floors.rate_limited_writes``): as many as the rule emits in that batch (the exact reference, for
    spark-suppress's sharding) less the batch's keys, at most the batch's records. ``seq`` numbers a set's records
    in arrival order from 0 (``events``), so a batch's first is the number of records before it. Cached: each run
    of the floor asks again, and the reference takes seconds."""
    batches = input_batches(input_dir)
    shard = checks.library_shard(SHUFFLE_PARTITIONS)
    emitted = Counter(
        b for b, *_ in checks.rate_limit_reference(batches, time_limit_ms, max_records, WATERMARK_DELAY_MS, shard)
    )
    firsts = itertools.accumulate((len(rows) for rows in batches), initial=0)
    return tuple(
        (first, min(max(emitted[b] - len({key for key, _, _ in rows}), 0), len(rows)))
        for b, (first, rows) in enumerate(zip(firsts, batches))
    )


def floor(ctx: Context, name: str, label: str, time_limit_ms: int, max_records: int) -> System:
    """The rate-limit floor (``floors.rate_limited_writes``) over the events, its quotas from ``floor_quota``."""
    return floors.system(
        ctx,
        name,
        label,
        ["key", "ts", "value", "seq"],
        floors.rate_limited_writes,
        quota=lambda path: floor_quota(path, time_limit_ms, max_records),
    )


def output_rows(out_dir: str) -> List[Tuple[Optional[int], str, int, int]]:
    """(micro-batch, key, ts ms, value) of every row a query wrote, the batch from the Parquet sink's log."""
    from .chains import sink_batches

    rows: List[Tuple[Optional[int], str, int, int]] = []
    for name, batch in sink_batches(out_dir).items():
        t = pq.read_table(os.path.join(out_dir, name), columns=["key", "ts", "value"])
        rows += [
            (batch, k, ts, v)
            for k, ts, v in zip(t["key"].to_pylist(), ev.millis(t["ts"]).tolist(), t["value"].to_pylist())
        ]
    return rows


def check_outputs(
    outputs: Dict[str, str],
    input_dir: str,
    time_limit_ms: int,
    max_records: int,
    shard_of: Dict[str, Callable[[str], int]],
    floor_dir: Optional[str] = None,
) -> Dict[str, Any]:
    """Every system's output (name -> output directory) against the exact reference for its sharding
    (``shard_of``: name -> the system's shard function); with ``floor_dir``, how many rows the floor wrote."""
    batches = input_batches(input_dir)
    check: Dict[str, Any] = {"input_records": sum(len(b) for b in batches), "systems": {}}
    references: Dict[Any, list] = {}
    for name, out_dir in outputs.items():
        shards = shard_of[name]
        if shards not in references:
            references[shards] = checks.rate_limit_reference(
                batches, time_limit_ms, max_records, WATERMARK_DELAY_MS, shards
            )
        check["systems"][name] = checks.check_rate_limit(references[shards], output_rows(out_dir))
    check["ok"] = all(c["ok"] for c in check["systems"].values())
    if floor_dir is not None:
        check["floor_rows"] = parquet_rows(floor_dir)
    return check


def shard_functions(names: List[str]) -> Dict[str, Callable[[str], int]]:
    """spark-suppress's systems shard with its own hash, the PySpark jobs with ``pmod(hash(key), shards)``."""
    lib, spark = checks.library_shard(SHUFFLE_PARTITIONS), checks.spark_hash_shard(SHUFFLE_PARTITIONS)
    return {n: lib if n.startswith("spark-suppress") else spark for n in names}


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
    chosen.append(
        floor(
            ctx,
            "floor",
            "floor: each key's latest update of each micro-batch (combined before the shuffle) and as many more "
            "records as the rule emits in the batch, no state",
            t,
            m,
        )
    )
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
    records = [m_.record() for m_ in measured.values()]
    add_ratios(records, anchor=None, floor="floor")
    names = [n for n in ("spark-suppress", "applyInPandasWithState") if n in measured]
    outputs = {n: measured[n].last.output_path for n in names}
    check = check_outputs(outputs, path, t, m, shard_functions(names), measured["floor"].last.output_path)
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
        },
        "systems": records,
        "check": check,
        "targets": [target("speed-up over applyInPandasWithState", py["seconds"] / lib["seconds"], ">=", 50, "x")],
    }
