"""Benchmark 5: the stream-table join with a grace period against Spark's stream-static join.

Stream: the event set. Table: a changelog of each key's tier (a first version before the events, then a new one
per key every minute of event time on average, arriving with the same disorder), read as a stream file by file
in step with the events. Spark can only join the stream with a static snapshot (the latest tier of each key,
which is wrong for every event older than that version); ``join_versioned`` joins every event with the version
valid at its timestamp, waiting ``grace`` for late table updates. Measured: throughput of both, and how the grace
buffer's cost grows with grace.
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any, Dict, List

import pyarrow.parquet as pq

from . import events as ev
from .context import Context
from .measure import System, add_ratios, log, measure
from .streaming import read_files

NAME = "join"


def stream_static(spark, events_dir: str, snapshot_dir: str):
    table = spark.read.parquet(snapshot_dir)
    return read_files(spark, events_dir, ev.EVENT_SCHEMA).select("key", "ts", "value").join(table, "key", "left")


def grace_join(spark, events_dir: str, table_dir: str, grace_ms: int, retention_ms: int):
    import spark_suppress as ss

    return ss.join_versioned(
        read_files(spark, events_dir, ev.EVENT_SCHEMA).select("key", "ts", "value"),
        read_files(spark, table_dir, ev.TABLE_SCHEMA),
        on="key",
        stream_timestamp="ts",
        table_timestamp="changed_at",
        grace=timedelta(milliseconds=grace_ms),
        history_retention=timedelta(milliseconds=retention_ms),
        how="left",
    )


def _snapshot(ctx: Context, table_dir: str) -> str:
    path = os.path.join(ctx.data_dir, os.path.basename(table_dir) + "-latest.parquet")
    if not os.path.exists(path):
        pq.write_table(ev.latest_versions(table_dir), path + ".tmp")
        os.rename(path + ".tmp", path)
    return path


def _system_name(grace_ms: int) -> str:
    return f"grace-{grace_ms}ms"


def run(ctx: Context) -> Dict[str, Any]:
    s, shape = ctx.settings, ctx.settings.join
    events_dir = ev.events(ctx.data_dir, shape)
    table_dir = ev.table_changelog(ctx.data_dir, shape, s.join_table_version_interval_ms)
    snapshot = _snapshot(ctx, table_dir)
    warm = ctx.warmup()
    tables = {events_dir: (table_dir, snapshot)}
    if warm is not None:
        warm_table = ev.table_changelog(ctx.data_dir, s.warmup, s.join_table_version_interval_ms)
        tables[warm[0]] = (warm_table, _snapshot(ctx, warm_table))
    retention = s.join_history_retention_ms

    systems: List[System] = [
        System(
            "stream-static",
            "Spark stream-static left join (latest snapshot)",
            "anchor",
            lambda p: stream_static(ctx.spark, p, tables[p][1]),
        )
    ]
    for g in s.join_graces_ms:
        systems.append(
            System(
                _system_name(g),
                f"spark-suppress join_versioned, left, grace {g} ms",
                "library",
                lambda p, g=g: grace_join(ctx.spark, p, tables[p][0], g, retention),
            )
        )
    measured = measure(
        systems,
        events_dir,
        shape.records,
        ctx.scratch(NAME),
        s.repeats,
        s.repeats,
        warmup=warm,
        keep_output=True,
        event_log=ctx.event_log,
    )
    records = [m.record() for m in measured.values()]
    add_ratios(records, anchor="stream-static", floor=None)
    check: Dict[str, Any] = {"stream_records": shape.records, "output_rows": {}}
    for r in records:
        m = measured[r["system"]]
        out = pq.read_table(m.last.output_path, columns=["key"]).to_pandas()
        rows = int((~ev.is_flush(out["key"])).sum())
        check["output_rows"][r["system"]] = rows
        r["peak_state_bytes"] = m.last.peak_state.current_version_bytes
        r["peak_state_operators"] = m.last.peak_state.operators
    check["every_record_joined_once"] = all(v == shape.records for v in check["output_rows"].values())
    log(f"{NAME}: every stream record joined once: {check['every_record_joined_once']}")
    table_rows = pq.read_table(table_dir, columns=["key"]).num_rows
    return {
        "title": "Stream-table join with grace vs stream-static join",
        "params": {
            "stream_records": shape.records,
            "keys": shape.keys,
            "table_updates": table_rows,
            "graces_ms": s.join_graces_ms,
            "history_retention_ms": retention,
            "table_version_interval_ms": s.join_table_version_interval_ms,
            "records_per_file": shape.records_per_file,
        },
        "systems": records,
        "check": check,
        "targets": [],
    }
