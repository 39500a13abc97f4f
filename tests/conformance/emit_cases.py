"""Emit-strategy vectors (``feature: emit_strategy``) through the real Spark operator, one record per micro-batch.

Vectors run at their own timestamps (no offset, unlike suppress): window starts are clamped at 0, so shifting
time would change which windows exist. None of them needs an event-time timer at or before 0 (the earliest
timer here is at 9, for [0,10) with grace 0).
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType, TimestampType

import spark_suppress as ss
from spark_suppress.testing import TestDriver

from .common import Mismatch, expect_build_error, fails_at_build, group_expected, records_by_step, run_steps, ts


def optional_note(v: Dict[str, Any]) -> Optional[str]:
    """Added to an optional vector's reason when its config needs the wall-clock throttle."""
    if v["config"].get("emitIntervalMs"):
        return (
            "deviation: Kafka throttles final-result emission by wall-clock time (emit interval); here emission is "
            "driven by the watermark only, so a window is emitted as soon as stream time closes it"
        )
    return None


def _min_retention(w: Dict[str, Any]) -> Optional[int]:
    """The smallest window-store retention Kafka accepts for these windows."""
    if w.get("type") == "time":
        return w["sizeMs"] + w["graceMs"]
    if w.get("type") == "session":
        return w["gapMs"] + w["graceMs"]
    if w.get("type") == "sliding":
        return 2 * w["timeDifferenceMs"] + w["graceMs"]
    return None


def skip_reason(v: Dict[str, Any]) -> Optional[str]:
    cfg = v["config"]
    window = cfg.get("window") or {}
    if window.get("type") == "unlimited":
        return (
            "Kafka-only: UnlimitedWindows has no counterpart here (every window kind of this API has a finite size, "
            "time difference or gap, so onWindowClose is defined for all of them)"
        )
    retention, smallest = cfg.get("windowStoreRetentionMs"), _min_retention(window)
    if retention is not None and smallest is not None and retention < smallest:
        return (
            "Kafka-only: window-store retention is not configurable here (each window is kept exactly until it "
            f"closes at end + grace, so a retention below the {smallest} ms Kafka requires ({retention} ms) "
            "cannot arise)"
        )
    return None


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


def _invalid_window(w: Dict[str, Any]) -> Optional[str]:
    """Why Kafka's window builders refuse these values, or None when they are valid."""
    if w["type"] == "time":
        if w["sizeMs"] <= 0 or w["graceMs"] < 0 or not 0 < w["advanceMs"] <= w["sizeMs"]:
            return "time windows need size > 0, 0 < advance <= size and grace >= 0"
    elif w["type"] == "session":
        if w["gapMs"] <= 0 or w["graceMs"] < 0:
            return "session windows need gap > 0 and grace >= 0"
    elif w["type"] == "sliding":
        if w["timeDifferenceMs"] < 0 or w["graceMs"] < 0:
            return "sliding windows need time difference >= 0 and grace >= 0"
    return None


def _aggregate(df, cfg: Dict[str, Any], name: str):
    emit = (
        ss.EmitStrategy.on_window_close()
        if cfg.get("emitStrategy") == "onWindowClose"
        else ss.EmitStrategy.on_window_update()
    )
    return ss.aggregate_windowed(
        df,
        key="key",
        timestamp="ts",
        windows=_windows(cfg["window"]),
        aggregations=[_aggregation(cfg.get("aggregation", "count")).alias("agg")],
        emit=emit,
        name=name,
    )


def run(spark, v: Dict[str, Any], name: str) -> None:
    cfg = v["config"]
    window = cfg["window"]
    schema = StructType(
        [StructField("key", StringType()), StructField("ts", TimestampType()), StructField("value", StringType())]
    )
    driver = TestDriver(spark, schema, timestamp="ts")
    if fails_at_build(v):
        try:
            # The JVM refuses invalid window values when the aggregation is built ("... must be > 0 ...").
            kind = _invalid_window(window)
            expect_build_error(v, kind and (kind, "must be >"), lambda: _aggregate(driver.input, cfg, name))
        finally:
            driver.stop()
        return
    out = _aggregate(driver.input, cfg, name)
    retractions = "retraction" in out.columns
    cols = [
        F.col("key"),
        F.unix_millis("window.start").alias("ws"),
        F.unix_millis("window.end").alias("we"),
        F.col("agg"),
        F.unix_millis("ts").alias("ts_ms"),
    ]
    if retractions:
        cols.append(F.col("retraction"))
    driver.start(out.select(*cols))

    # Per key, the outputs of a step must match in order (across windows too); across keys order is free.
    expected = group_expected(
        v.get("expected", []), lambda o: o["key"], lambda o: (o["window_start"], o["window_end"], o["value"])
    )
    steps = records_by_step(v["input"])

    def feed(seq: int):
        rows = [(r["key"], ts(r["ts"]), None if r["value"] is None else str(r["value"])) for r in steps.get(seq, [])]
        return driver.step(rows) if rows or seq in expected else []

    def render(r):
        value = None if retractions and r["retraction"] else r["agg"]
        return r["key"], ((r["ws"], _kafka_end(window, r["we"]), value), r["ts_ms"])

    try:
        run_steps(v, name, driver, steps, expected, feed, render)
    finally:
        driver.stop()
