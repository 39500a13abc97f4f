"""Suppress vectors (``feature: suppress``) through the real Spark operator, one record per micro-batch."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, LongType, StringType, StructField, StructType, TimestampType

import spark_suppress as ss
from spark_suppress.testing import TestDriver

from .common import (
    Mismatch,
    expect_build_error,
    fails_at_build,
    group_expected,
    records_by_step,
    run_steps,
    size_model_skip,
    ts,
)

# Spark refuses event-time timers at or before the epoch ("Timeout timestamp must be positive"), and Kafka's tests
# use timestamps a few milliseconds after it. Suppress rules depend on time differences only, so every suppress
# vector runs shifted one day later (inputs shifted, outputs shifted back). See docs/deviations.md.
OFFSET_MS = 86_400_000

LONG_MAX = 9_223_372_036_854_775_807

# Markers of our own validation messages (spark-suppress's wording, not Kafka's).
NOT_WINDOWED = "until_window_closes needs windowed input"
BUFFER_FULL = "buffer exceeded its max capacity"


def _suppress_config(v: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The suppress operator's configuration: the config itself, or its ``suppress`` part in a pipeline vector."""
    cfg = v["config"]
    if "mode" in cfg:
        return cfg
    if "suppress" in cfg and ("expected_raw" in v or v.get("error_at") is not None):
        return cfg["suppress"]
    return None


def skip_reason(v: Dict[str, Any]) -> Optional[str]:
    cfg = v["config"]
    if (cfg.get("input") or {}).get("versionedTable"):
        return (
            "Kafka-only error: versioned KTables have no counterpart here (suppress takes a changelog DataFrame, "
            "never a versioned table)"
        )
    if _suppress_config(v) is None:
        # Without Kafka's upstream changelog (expected_raw) the records reaching suppress are not known here.
        return "no suppress configuration with the changelog reaching it in this vector"
    return size_model_skip(v)


def _suppressed(cfg: Dict[str, Any], name: str) -> ss.Suppressed:
    records, bytes_ = cfg.get("maxRecords"), cfg.get("maxBytes")
    full = cfg["bufferFull"]
    if full == "unbounded" or (records is None and bytes_ is None and full != "emitEarly"):
        buffer = ss.BufferConfig.unbounded()
    else:
        buffer = ss.BufferConfig.unbounded()
        if records is not None:
            buffer = buffer.with_max_records(records)
        if bytes_ is not None:
            buffer = buffer.with_max_bytes(bytes_)
        buffer = buffer.emit_early_when_full() if full == "emitEarly" else buffer.shut_down_when_full()
    if cfg.get("sizeModel") == "value_length":
        buffer = buffer.with_size_model("value_bytes")
    if cfg["mode"] == "untilTimeLimit":
        s = ss.Suppressed.until_time_limit(cfg["timeLimitMs"], buffer)
        if cfg.get("bufferTime") == "latest":
            s = s.with_timer_reset()
    else:
        s = ss.Suppressed.until_window_closes(buffer)
    return s.with_name(name)


def _window_close_delay(cfg: Dict[str, Any]) -> int:
    """untilWindowCloses' suppress duration: as stated, else the grace Kafka finds upstream (sessions: + gap)."""
    if cfg.get("effectiveSuppressDurationMs") is not None:
        return cfg["effectiveSuppressDurationMs"]
    window = cfg.get("window") or {}
    return window.get("graceMs", 0) + (window.get("gapMs", 0) if window.get("type") == "session" else 0)


def _suppress(df, cfg: Dict[str, Any], windowed: bool, name: str):
    kwargs: Dict[str, Any] = {"window": "window"} if windowed else {}
    if cfg["mode"] == "untilWindowCloses":
        kwargs["grace"] = _window_close_delay(cfg)
    return ss.suppress(df, key="key", timestamp="ts", suppressed=_suppressed(cfg, name), tombstone="deleted", **kwargs)


def _schema(windowed: bool, text: bool) -> StructType:
    fields = [
        StructField("key", StringType()),
        StructField("ts", TimestampType()),
        StructField("value", StringType() if text else LongType()),
        StructField("deleted", BooleanType()),
    ]
    if windowed:
        fields.append(
            StructField(
                "window", StructType([StructField("start", TimestampType()), StructField("end", TimestampType())])
            )
        )
    return StructType(fields)


def _steps(v: Dict[str, Any]) -> Dict[int, List[Dict[str, Any]]]:
    """The records reaching suppress per step: the input, or in a pipeline vector the upstream changelog."""
    if "mode" in v["config"]:
        return records_by_step(v["input"])
    # Our suppress takes the changelog itself; Kafka's test asserts that changelog as expected_raw, and each raw
    # record reaches suppress while the input record at its after_seq is processed.
    return records_by_step(v.get("expected_raw", []), "after_seq")


def _restart_step(cfg: Dict[str, Any], seqs: List[int]) -> Optional[int]:
    """Where to restart the query from its checkpoint, checking that buffered records survive a restart.

    Kafka restores the buffer from its changelog but not suppress's stream time, so a restart leaves Kafka's
    output unchanged only when no record can expire by time: a time limit of Long.MAX_VALUE. Those vectors are
    restarted halfway through; the others would expect outputs that depend on the lost stream time.
    """
    if cfg["mode"] != "untilTimeLimit" or cfg.get("timeLimitMs") != LONG_MAX or len(seqs) < 2:
        return None
    return sorted(seqs)[len(seqs) // 2]


def run(spark, v: Dict[str, Any], name: str) -> None:
    cfg = _suppress_config(v)
    if fails_at_build(v):
        return _build_error(spark, v, cfg, name)
    steps = _steps(v)
    records = [r for rs in steps.values() for r in rs]
    windowed = any("window_start" in r for r in records)
    text = any(isinstance(r.get("value"), str) for r in records)
    driver = TestDriver(spark, _schema(windowed, text), timestamp="ts")
    out = _suppress(driver.input, cfg, windowed, name)
    cols = [F.col("key"), F.col("value"), F.col("deleted"), F.unix_millis("ts").alias("ts_ms")]
    if windowed:
        cols += [F.unix_millis("window.start").alias("ws"), F.unix_millis("window.end").alias("we")]
    driver.start(out.select(*cols))

    expected = group_expected(v.get("expected", []), lambda o: (o["key"], o.get("window_start"), o.get("window_end")))
    error_step = v.get("error_after_seq")
    restart_at = _restart_step(cfg, list(steps))

    def feed(seq: int):
        rows = [
            (
                r["key"],
                ts(OFFSET_MS + r["ts"]),
                r["value"],
                r["value"] is None,
                *([(ts(OFFSET_MS + r["window_start"]), ts(OFFSET_MS + r["window_end"]))] if windowed else []),
            )
            for r in steps.get(seq, [])
        ]
        return driver.step(rows) if rows or seq in expected or seq == error_step else []

    def render(r) -> Tuple[Any, Tuple[Any, int]]:
        value = None if r["deleted"] else r["value"]
        key = (r["key"], r["ws"] - OFFSET_MS, r["we"] - OFFSET_MS) if windowed else (r["key"], None, None)
        return key, (value, r["ts_ms"] - OFFSET_MS)

    def step_error(seq: int, e: Exception) -> None:
        if cfg["bufferFull"] != "shutDown":
            raise Mismatch(f"after seq {seq}: bufferFull {cfg['bufferFull']!r} never fails a step, got {str(e)[:300]}")
        if BUFFER_FULL not in str(e):
            raise Mismatch(f"after seq {seq}: expected a buffer-full error, got {str(e)[:300]}")

    def after_step(seq: int) -> None:
        if seq == restart_at:
            driver.restart()
            leftover = driver.advance()
            if leftover:
                raise Mismatch(f"after the restart at seq {seq}: replayed {leftover}")

    try:
        run_steps(v, name, driver, steps, expected, feed, render, step_error, after_step)
    finally:
        driver.stop()


def _build_error(spark, v: Dict[str, Any], cfg: Dict[str, Any], name: str) -> None:
    windowed = cfg.get("window") is not None
    kind = None
    if cfg["mode"] == "untilWindowCloses" and not windowed:
        kind = ("untilWindowCloses on a non-windowed table", NOT_WINDOWED)
    driver = TestDriver(spark, _schema(windowed, text=False), timestamp="ts")
    try:
        expect_build_error(v, kind, lambda: _suppress(driver.input, cfg, windowed, name))
    finally:
        driver.stop()
