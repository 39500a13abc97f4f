"""Suppress vectors (``feature: suppress``) through the real Spark operator, one record per micro-batch."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Dict, List, Optional

from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, LongType, StringType, StructField, StructType, TimestampType

import spark_suppress as ss
from spark_suppress.testing import TestDriver

from .common import Mismatch, Skip, close, compare_step, group_expected, ts

# Steps after which the Kafka test restarted the application: the runner restarts the query from its checkpoint
# at the same point, so the vector also checks that buffered records survive a restart.
RESTART_AFTER_SEQ = {"suppress.max_records_3_emit_early_e2e": 4}

# Spark refuses event-time timers at or before the epoch ("Timeout timestamp must be positive"), and Kafka's tests
# use timestamps a few milliseconds after it. Suppress rules depend on time differences only, so every suppress
# vector runs shifted one day later (inputs shifted, outputs shifted back). See the README's deviations.
OFFSET_MS = 86_400_000

KAFKA_ONLY = {
    "suppress.error_on_versioned_table": "Kafka-only error: versioned KTables have no counterpart here (suppress "
    "takes a changelog DataFrame, never a versioned table)",
}


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


def _steps_and_config(v: Dict[str, Any]):
    """(suppress config, records per step) — for pipeline vectors the changelog reaching suppress (expected_raw)."""
    cfg = v["config"]
    if "mode" in cfg:
        steps: Dict[int, List[Dict[str, Any]]] = defaultdict(list)
        for r in v["input"]:
            steps[r["seq"]].append(r)
        return cfg, steps
    if "suppress" in cfg and "expected_raw" in v:
        # Our suppress takes the changelog itself; Kafka's test asserts that changelog as expected_raw, and each
        # raw record reaches suppress while the input record at its after_seq is processed.
        steps = defaultdict(list)
        for r in v["expected_raw"]:
            steps[r["after_seq"]].append(r)
        return cfg["suppress"], steps
    raise Skip("no suppress configuration in this vector")


def run(spark, v: Dict[str, Any], name: str) -> None:
    if v.get("error_at") == "build":
        return _build_error(spark, v, name)
    cfg, steps = _steps_and_config(v)
    sizes = v.get("kafka_entry_sizes_bytes")
    if v.get("size_model_dependent") and isinstance(sizes, str):
        raise Skip(
            "size_model_dependent: Kafka's estimate counts the record's topic name (a ~90-char repartition topic "
            f"here: {sizes}); spark-suppress's entry size (README) has no topic, so the byte bound bites elsewhere"
        )
    records = [r for rs in steps.values() for r in rs]
    windowed = any("window_start" in r for r in records)
    is_text = any(isinstance(r.get("value"), str) for r in records)
    fields = [
        StructField("key", StringType()),
        StructField("ts", TimestampType()),
        StructField("value", StringType() if is_text else LongType()),
        StructField("deleted", BooleanType()),
    ]
    if windowed:
        fields.append(
            StructField("window", StructType([StructField("start", TimestampType()), StructField("end", TimestampType())]))
        )
    schema = StructType(fields)
    driver = TestDriver(spark, schema, timestamp="ts")
    kwargs = {}
    if windowed:
        kwargs["window"] = "window"
    if cfg["mode"] == "untilWindowCloses":
        kwargs["grace"] = cfg["effectiveSuppressDurationMs"]
    out = ss.suppress(driver.input, key="key", timestamp="ts", suppressed=_suppressed(cfg, name), tombstone="deleted", **kwargs)
    cols = [F.col("key"), F.col("value"), F.col("deleted"), F.unix_millis("ts").alias("ts_ms")]
    if windowed:
        cols += [F.unix_millis("window.start").alias("ws"), F.unix_millis("window.end").alias("we")]
    driver.start(out.select(*cols))

    def key_of(o):
        return (o["key"], o.get("window_start"), o.get("window_end"))

    expected = group_expected(v.get("expected", []), key_of)
    error_step = v.get("error_after_seq")
    metrics_expected = v.get("expected_metrics")
    if isinstance(metrics_expected, dict):
        metrics_expected = [dict(metrics_expected, after_seq=max(steps) if steps else 0)]
    try:
        last = max([max(steps, default=-1), max(expected, default=-1)])
        for seq in range(last + 1):
            rows = [
                (r["key"], ts(OFFSET_MS + r["ts"]), r["value"], r["value"] is None,
                 *([(ts(OFFSET_MS + r["window_start"]), ts(OFFSET_MS + r["window_end"]))] if windowed else []))
                for r in steps.get(seq, [])
            ]
            if error_step is not None and seq == error_step:
                try:
                    driver.step(rows)
                except Exception as e:  # the micro-batch fails and commits nothing
                    if "buffer exceeded its max capacity" not in str(e):
                        raise Mismatch(f"after seq {seq}: expected a buffer-full error, got {str(e)[:300]}")
                    return
                raise Mismatch(f"after seq {seq}: expected {v['expected_error']}, but the step succeeded")
            emitted = driver.step(rows) if rows or seq in expected else []
            actual = defaultdict(list)
            for r in emitted:
                value = None if r["deleted"] else r["value"]
                k = (r["key"], r["ws"] - OFFSET_MS, r["we"] - OFFSET_MS) if windowed else (r["key"], None, None)
                actual[k].append((value, r["ts_ms"] - OFFSET_MS))
            compare_step(seq, expected.get(seq, {}), actual)
            for m in metrics_expected or []:
                if m["after_seq"] == seq:
                    got = ss.metrics(driver.query).get(name, {})
                    for metric, want in m.items():
                        if metric != "after_seq" and not close(got.get(metric, float("nan")), want):
                            raise Mismatch(f"after seq {seq}: metric {metric} expected {want}, got {got.get(metric)}")
            if RESTART_AFTER_SEQ.get(v["id"]) == seq:
                driver.restart()
                leftover = driver.advance()
                if leftover:
                    raise Mismatch(f"after the restart at seq {seq}: replayed {leftover}")
        if error_step is not None:
            raise Mismatch(f"expected {v['expected_error']} after seq {error_step}")
    finally:
        driver.stop()


def _build_error(spark, v: Dict[str, Any], name: str) -> None:
    # "untilWindowCloses on a non-windowed table": the counterpart is untilWindowCloses without a window.
    schema = "key STRING, ts TIMESTAMP, value LONG"
    driver = TestDriver(spark, schema, timestamp="ts")
    try:
        ss.suppress(
            driver.input, key="key", timestamp="ts", grace=0,
            suppressed=ss.Suppressed.until_window_closes(ss.BufferConfig.unbounded()).with_name(name),
        )
    except Exception as e:
        if "Window close time is only defined for windowed computations" in str(e):
            return
        raise Mismatch(f"expected {v['expected_error']}, got {str(e)[:300]}")
    raise Mismatch(f"expected {v['expected_error']} when the operator is built")
