"""Stream-table join vectors (``feature: grace_join``) through the real Spark operator, one record per micro-batch.

Each vector becomes a stream input (key, ts, sv) and a table changelog input (key, ts, tv, deleted; a null
table value is a tombstone) fed one record per step. The join's output columns (key, sv, tv, ts) are rendered
as the vector's joiner string: ``sv + sep + tv`` with a null table value written "null" (Java concatenation).
By default no input carries a watermark: the join takes its stream times from the records themselves, as Kafka
does. With ``--join-stream-watermark`` (run.py) the stream carries one with a 0-second delay, so joins with a grace
period also release on it (the default ``release_on_watermark``: a shard without more records is not starved);
Kafka's timing must not change. The runner's session has one shuffle partition, so the join has one shard, as the
Kafka tests have one task.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Optional, Tuple

from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, IntegerType, LongType, StringType, StructField, StructType, TimestampType

import spark_suppress as ss
from spark_suppress.testing import TestDriver

from .common import Mismatch, expect_build_error, fails_at_build, group_expected, run_steps, ts

# Kafka's words for the two rules tying grace to the table; our messages start with them.
GRACE_NEEDS_VERSIONED_TABLE = "KTable must be versioned to use a grace period in a stream table join."
GRACE_EXCEEDS_HISTORY = "History retention must be at least grace period."

KEY_TYPES = {"int32": IntegerType(), "int64": LongType(), "string": StringType()}

# Set by run.py's --join-stream-watermark: the stream input's watermark delay, or None for no watermark.
STREAM_WATERMARK = None

# Sides of a stream-table join; left_table/right_table belong to KTable-KTable joins.
SIDES = ("stream", "table")


def skip_reason(v: Dict[str, Any]) -> Optional[str]:
    other = sorted({r["side"] for r in v.get("input", [])} - set(SIDES))
    if other:
        return f"input sides {other} have no counterpart in a stream-table join"
    return None


def _separator(cfg: Dict[str, Any]) -> str:
    match = re.search(r'"([^"]*)"', cfg["joiner"])
    if match is None:
        raise Mismatch(f"cannot read the joiner's separator from {cfg['joiner']!r}")
    return match.group(1)


def _inputs(driver: TestDriver, key_type):
    stream = driver.add_input(
        "stream",
        StructType([StructField("key", key_type), StructField("ts", TimestampType()), StructField("sv", StringType())]),
        timestamp=None if STREAM_WATERMARK is None else "ts",
        watermark_delay=STREAM_WATERMARK or "0 seconds",
    )
    table = driver.add_input(
        "table",
        StructType(
            [
                StructField("key", key_type),
                StructField("ts", TimestampType()),
                StructField("tv", StringType()),
                StructField("deleted", BooleanType()),
            ]
        ),
    )
    return stream, table


def _join(stream, table, cfg: Dict[str, Any], name: str):
    """The join as the config describes it. ``table.filtered``: the table reaches the join through a stateless
    filter. The vocabulary names no predicate, so the filter keeps every row: what matters is that a filtered
    table is still the same (non-)versioned table, as Kafka's inherited materialization is."""
    t = cfg["table"]
    versioned = t.get("versioned", False)
    if t.get("filtered"):
        table = table.where(F.lit(True))
    return ss.join_versioned(
        stream,
        table,
        on="key",
        stream_timestamp="ts",
        table_timestamp="ts",
        grace=cfg.get("graceMs"),
        history_retention=t.get("historyRetentionMs") if versioned else None,
        how=cfg.get("joinType", "inner"),
        tombstone="deleted",
        name=name,
    )


def _build_error_kind(cfg: Dict[str, Any]) -> Optional[Tuple[str, str]]:
    """(kind, marker in our message) of the error this config must raise when the join is built, or None."""
    t, grace = cfg["table"], cfg.get("graceMs")
    if grace is None:
        return None
    if not t.get("versioned"):
        return "grace on a non-versioned table", GRACE_NEEDS_VERSIONED_TABLE
    retention = t.get("historyRetentionMs")
    if retention is not None and grace > retention:
        return "grace longer than the table's history retention", GRACE_EXCEEDS_HISTORY
    return None


def run(spark, v: Dict[str, Any], name: str) -> None:
    cfg = v["config"]
    driver = TestDriver(spark)
    stream, table = _inputs(driver, KEY_TYPES[cfg.get("keyType", "string")])
    if fails_at_build(v):
        try:
            expect_build_error(v, _build_error_kind(cfg), lambda: _join(stream, table, cfg, name))
        finally:
            driver.stop()
        return
    sep = _separator(cfg)
    driver.start(_join(stream, table, cfg, name).select("key", "sv", "tv", F.unix_millis("ts").alias("ts_ms")))
    expected = group_expected(v.get("expected", []), lambda o: (o["key"],))
    records = {r["seq"]: r for r in v["input"]}

    def feed(seq: int):
        r = records.get(seq)
        if r is None:
            return driver.advance()
        if r["side"] == "stream":
            return driver.step([(r["key"], ts(r["ts"]), r["value"])], input="stream")
        return driver.step([(r["key"], ts(r["ts"]), r["value"], r["value"] is None)], input="table")

    def render(o):
        tv = "null" if o["tv"] is None else o["tv"]
        return (o["key"],), (f"{o['sv']}{sep}{tv}", o["ts_ms"])

    try:
        run_steps(v, name, driver, records, expected, feed, render)
    finally:
        driver.stop()
