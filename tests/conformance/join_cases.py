"""Stream-table join vectors (``feature: grace_join``) through the real Spark operator, one record per micro-batch.

Each vector becomes a stream input (key, ts, sv) and a table changelog input (key, ts, tv, deleted; a null
table value is a tombstone) fed one record per step. The join's output columns (key, sv, tv, ts) are rendered
as the vector's joiner string: ``sv + sep + tv`` with a null table value written "null" (Java concatenation).
By default no input carries a watermark: the join takes its stream times from the records themselves, as Kafka
does. With ``--join-stream-watermark`` (run.py) the stream carries one with a 0-second delay and joins with a grace
period release on it (``release_on_watermark``: a shard without more records is not starved); Kafka's timing must
not change. The runner's session has one shuffle partition, so the join has one shard, as the Kafka tests have one task.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any, Dict

from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, IntegerType, LongType, StringType, StructField, StructType, TimestampType

import spark_suppress as ss
from spark_suppress.testing import TestDriver

from .common import Mismatch, Skip, close, compare_step, group_expected, ts

KEY_TYPES = {"int32": IntegerType(), "int64": LongType(), "string": StringType()}

# Set by run.py's --join-stream-watermark: the stream input's watermark delay, or None for no watermark.
STREAM_WATERMARK = None

# The build-time errors and their counterpart here: grace, history retention (None = a non-versioned table), and
# whether the table changelog is filtered first (Kafka's "inherited materialization": a filtered non-versioned
# table is still non-versioned here).
BUILD_ERRORS = {
    "join.error_grace_longer_than_history": (6 * 60_000, 5 * 60_000, False),
    "join.error_grace_on_inherited_non_versioned_table": (6, None, True),
    "join.error_grace_on_non_versioned_table": (6, None, False),
}


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


def run(spark, v: Dict[str, Any], name: str) -> None:
    if v.get("error_at") is not None:
        return _build_error(spark, v, name)
    cfg = v["config"]
    sep = _separator(cfg)
    versioned = cfg["table"]["versioned"]
    driver = TestDriver(spark)
    stream, table = _inputs(driver, KEY_TYPES[cfg["keyType"]])
    joined = ss.join_versioned(
        stream,
        table,
        on="key",
        stream_timestamp="ts",
        table_timestamp="ts",
        grace=cfg["graceMs"],
        history_retention=cfg["table"]["historyRetentionMs"] if versioned else None,
        how=cfg["joinType"],
        tombstone="deleted",
        name=name,
        release_on_watermark=STREAM_WATERMARK is not None and cfg["graceMs"] is not None,
    )
    driver.start(joined.select("key", "sv", "tv", F.unix_millis("ts").alias("ts_ms")))
    expected = group_expected(v.get("expected", []), lambda o: (o["key"],))
    records = {r["seq"]: r for r in v["input"]}
    metrics_expected = v.get("expected_metrics") or []
    try:
        last = max([max(records, default=-1), max(expected, default=-1)])
        for seq in range(last + 1):
            r = records.get(seq)
            if r is None:
                emitted = driver.advance()
            elif r["side"] == "stream":
                emitted = driver.step([(r["key"], ts(r["ts"]), r["value"])], input="stream")
            elif r["side"] == "table":
                emitted = driver.step([(r["key"], ts(r["ts"]), r["value"], r["value"] is None)], input="table")
            else:
                raise Skip(f"input side {r['side']!r} has no counterpart in a stream-table join")
            actual = defaultdict(list)
            for o in emitted:
                tv = "null" if o["tv"] is None else o["tv"]
                actual[(o["key"],)].append((f"{o['sv']}{sep}{tv}", o["ts_ms"]))
            compare_step(seq, expected.get(seq, {}), actual)
            for m in metrics_expected:
                if m["after_seq"] == seq:
                    got = ss.metrics(driver.query).get(name, {})
                    for metric, want in m.items():
                        if metric != "after_seq" and not close(got.get(metric, float("nan")), want):
                            raise Mismatch(f"after seq {seq}: metric {metric} expected {want}, got {got.get(metric)}")
    finally:
        driver.stop()


def _build_error(spark, v: Dict[str, Any], name: str) -> None:
    if v["id"] not in BUILD_ERRORS:
        raise Mismatch(f"no counterpart defined for the build error {v['expected_error']!r}")
    grace, retention, filtered = BUILD_ERRORS[v["id"]]
    wanted = re.search(r"'([^']*)'", v["expected_error"]).group(1)
    driver = TestDriver(spark)
    stream, table = _inputs(driver, IntegerType())
    if filtered:
        table = table.where(F.col("tv").isNotNull())
    try:
        ss.join_versioned(
            stream, table, on="key", stream_timestamp="ts", table_timestamp="ts", grace=grace,
            history_retention=retention, tombstone="deleted", name=name,
        )
    except Exception as e:  # ValueError from the Python checks, IllegalArgumentException from the JVM's
        if wanted in str(e):
            return
        raise Mismatch(f"expected {wanted!r}, got {type(e).__name__}: {str(e)[:300]}")
    finally:
        driver.stop()
    raise Mismatch(f"expected {wanted!r} when the join is built")
