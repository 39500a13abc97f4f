"""Benchmark 5: the stream-table join with a grace period against Spark's stream-static join.

Stream: the event set. Table: a changelog of each key's tier (a first version before the events, then a new one
per key every minute of event time on average, arriving with the same disorder), read as a stream file by file
in step with the events. Spark can only join the stream with a static snapshot (the latest tier of each key,
which is wrong for every event older than that version); ``join_versioned`` joins every event with the version
valid at its timestamp, waiting ``grace`` for late table updates. Measured: throughput of both, and how the grace
buffer's cost grows with grace.

Check: every output row against two references computed from the inputs (``checks``): the table version valid at
the record's timestamp (how many rows each system got wrong: the stream-static join's wrong rows are the point of
the comparison), and, for spark-suppress, the exact result of Kafka's grace rule (a record joined before a late
table update arrived sees the table without it), which must hold.
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any, Dict, List, Tuple

import pyarrow.parquet as pq

from . import checks
from . import events as ev
from .context import Context
from .measure import System, add_ratios, log, measure
from .streaming import SHUFFLE_PARTITIONS, read_files

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


def _references(events_dir: str, table_dir: str, graces_ms: List[int], retention_ms: int) -> Dict[Any, list]:
    """The rows (key, ts, value, tier) each join should write, flush records left out: the version valid at each
    record's timestamp (``at_timestamp``), and per grace system the result of Kafka's grace rule over the
    micro-batches (one event file and the table file of the same number per batch)."""
    batches = []
    for e, t in zip(ev.parquet_files(events_dir), ev.parquet_files(table_dir)):
        table = pq.read_table(t)  # in arrival order
        batches.append(
            (
                ev.file_records(e),
                list(zip(table["key"].to_pylist(), ev.millis(table["changed_at"]).tolist(), table["tier"].to_pylist())),
            )
        )
    stream = [r for s, _ in batches for r in s if not r[0].startswith(ev.FLUSH_PREFIX)]
    table = [r for _, t in batches for r in t]
    at_ts = checks.version_at_timestamp([(k, ts) for k, ts, _ in stream], table)
    out: Dict[Any, list] = {"at_timestamp": [r + (v,) for r, v in zip(stream, at_ts)]}
    shard_of = checks.library_shard(SHUFFLE_PARTITIONS)
    for g in graces_ms:
        joined = checks.grace_join_reference(
            [([(k, ts) for k, ts, _ in s], t) for s, t in batches], g, retention_ms, shard_of
        )
        out[_system_name(g)] = [
            r + (v,)
            for (s, _), vs in zip(batches, joined)
            for r, v in zip(s, vs)
            if v is not checks.NOT_JOINED and not r[0].startswith(ev.FLUSH_PREFIX)
        ]
    return out


def _output_rows(out_dir: str) -> List[Tuple[str, int, int, Any]]:
    """(key, ts ms, value, tier) of every row the query wrote, flush records left out; a null tier is None."""
    from .chains import sink_batches

    rows: List[Tuple[str, int, int, Any]] = []
    for name in sink_batches(out_dir):
        t = pq.read_table(os.path.join(out_dir, name), columns=["key", "ts", "value", "tier"])
        rows += [
            r
            for r in zip(
                t["key"].to_pylist(), ev.millis(t["ts"]).tolist(), t["value"].to_pylist(), t["tier"].to_pylist()
            )
            if not r[0].startswith(ev.FLUSH_PREFIX)
        ]
    return rows


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
    references = _references(events_dir, table_dir, s.join_graces_ms, retention)
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
    check: Dict[str, Any] = {"stream_records": shape.records, "systems": {}}
    for r in records:
        m = measured[r["system"]]
        got = _output_rows(m.last.output_path)
        ideal, kafka_rule = references["at_timestamp"], references.get(r["system"])
        c = {"against_version_at_timestamp": checks.check_join(ideal, got)}
        if kafka_rule is not None:
            c["against_kafka_rule"] = checks.check_join(kafka_rule, got)
        check["systems"][r["system"]] = c
        r["wrong_rows"] = c["against_version_at_timestamp"]["wrong_rows"]
        r["peak_state_bytes"] = m.last.peak_state.current_version_bytes
        r["peak_state_operators"] = m.last.peak_state.operators
    # The stream-static join is wrong by design and only reported; spark-suppress must follow Kafka's rule.
    check["joined_as_of_kafka_rule"] = all(
        c["against_kafka_rule"]["ok"] for c in check["systems"].values() if "against_kafka_rule" in c
    )
    log(
        f"{NAME}: spark-suppress joined as Kafka's rule says: {check['joined_as_of_kafka_rule']}; rows not the "
        "version valid at the record's timestamp: "
        + ", ".join(f"{n} {c['against_version_at_timestamp']['wrong_rows']}" for n, c in check["systems"].items())
    )
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
