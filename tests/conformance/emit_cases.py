"""Emit-strategy vectors (``feature: emit_strategy``) through the real Spark operator, one record per micro-batch.

Vectors run at their own timestamps (no offset, unlike suppress): window starts are clamped at 0, so shifting
time would change which windows exist. None of them needs an event-time timer at or before 0 (the earliest
timer here is at 9, for [0,10) with grace 0).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Dict, List, Tuple

from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType, TimestampType

import spark_suppress as ss
from spark_suppress.testing import TestDriver

from .common import Mismatch, close, compare_step, ts

OPTIONAL_NOTE = (  # the one optional emit vector needs the throttle
    "deviation: Kafka throttles final-result emission by wall-clock time (emit interval); here emission is driven "
    "by the watermark only, so a window is emitted as soon as stream time closes it"
)

KAFKA_ONLY = {
    "emit.error_close_with_unlimited_windows": "Kafka-only: UnlimitedWindows has no counterpart here (every window "
    "kind of this API has a finite size, time difference or gap, so onWindowClose is defined for all of them)",
    "emit.error_retention_smaller_than_size_plus_grace": "Kafka-only: window-store retention is not configurable here "
    "(each window is kept exactly until it closes at end + grace, so a retention below size + grace cannot arise)",
}


def _windows(w: Dict[str, Any]):
    if w["type"] == "time":
        return ss.TimeWindows.of_size_and_grace(w["sizeMs"], w["graceMs"]).advance_by(w["advanceMs"])
    if w["type"] == "session":
        return ss.SessionWindows.of_inactivity_gap_and_grace(w["gapMs"], w["graceMs"])
    if w["type"] == "sliding":
        return ss.SlidingWindows.of_time_difference_and_grace(w["timeDifferenceMs"], w["graceMs"])
    raise Mismatch(f"unknown window type {w['type']!r}")


def _aggregation(a):
    if a == "count":
        return F.count("*")
    if a.get("aggregator") != 'agg + "+" + value' or a.get("sessionMerger", 'agg1 + "+" + agg2') != 'agg1 + "+" + agg2':
        raise Mismatch(f"no counterpart for aggregation {a!r}")
    initial = a["initializer"].strip('"')
    return ss.string_fold("value", initial=initial, separator="+")


def _kafka_end(window: Dict[str, Any], end_ms: int) -> int:
    """The output's exclusive window.end as Kafka states it (sessions and sliding windows: inclusive)."""
    if window["type"] == "session":
        return end_ms - window["gapMs"]
    if window["type"] == "sliding":
        return end_ms - 1
    return end_ms


def run(spark, v: Dict[str, Any], name: str) -> None:
    cfg = v["config"]
    window = cfg["window"]
    emit = ss.EmitStrategy.on_window_close() if cfg["emitStrategy"] == "onWindowClose" else ss.EmitStrategy.on_window_update()
    schema = StructType([StructField("key", StringType()), StructField("ts", TimestampType()), StructField("value", StringType())])
    driver = TestDriver(spark, schema, timestamp="ts")
    out = ss.aggregate_windowed(
        driver.input, key="key", timestamp="ts", windows=_windows(window),
        aggregations=[_aggregation(cfg["aggregation"]).alias("agg")], emit=emit, name=name,
    )
    retractions = "retraction" in out.columns
    cols = [F.col("key"), F.unix_millis("window.start").alias("ws"), F.unix_millis("window.end").alias("we"),
            F.col("agg"), F.unix_millis("ts").alias("ts_ms")]
    if retractions:
        cols.append(F.col("retraction"))
    driver.start(out.select(*cols))

    # Per key, the outputs of a step must match in order (across windows too); across keys order is free.
    expected: Dict[int, Dict[Any, List[Tuple[Any, int]]]] = defaultdict(lambda: defaultdict(list))
    for o in v.get("expected", []):
        expected[o["after_seq"]][o["key"]].append(((o["window_start"], o["window_end"], o["value"]), o["ts"]))
    steps: Dict[int, List[Dict[str, Any]]] = defaultdict(list)
    for r in v["input"]:
        steps[r["seq"]].append(r)
    try:
        last = max([max(steps, default=-1), max(expected, default=-1)])
        for seq in range(last + 1):
            rows = [(r["key"], ts(r["ts"]), None if r["value"] is None else str(r["value"])) for r in steps.get(seq, [])]
            emitted = driver.step(rows) if rows or seq in expected else []
            actual: Dict[Any, List[Tuple[Any, int]]] = defaultdict(list)
            for r in emitted:
                value = None if retractions and r["retraction"] else r["agg"]
                actual[r["key"]].append(((r["ws"], _kafka_end(window, r["we"]), value), r["ts_ms"]))
            compare_step(seq, expected.get(seq, {}), actual)
        wanted = v.get("expected_metrics")
        if wanted:
            got = ss.metrics(driver.query).get(name, {})
            for metric, value in wanted.items():
                if not close(got.get(metric, float("nan")), value):
                    raise Mismatch(f"after the last step: metric {metric} expected {value}, got {got.get(metric)}")
    finally:
        driver.stop()
