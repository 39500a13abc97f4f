"""Chains of operators (``feature: chain``, and suppress vectors whose config describes a pipeline over raw records)
through the real Spark operators as ONE streaming query, one record per micro-batch.

Each step of ``config.chain`` is built from its fields with the public Python API and applied to the previous
step's output, so the library fuses the chain into one stateful step. Vectors run at their own timestamps: window
starts are clamped at 0, so shifting time would change which windows exist.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any, Dict, List, Optional

from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, StringType, StructField, StructType, TimestampType

import spark_suppress as ss
from spark_suppress.testing import TestDriver

from .common import Mismatch, compare_step, size_model_skip, ts
from .emit_cases import _kafka_end, _windows
from .suppress_cases import _restart_step, _suppressed

SCHEMA = StructType(
    [
        StructField("key", StringType()),
        StructField("ts", TimestampType()),
        StructField("value", StringType()),
        StructField("deleted", BooleanType()),
    ]
)


def handles(v: Dict[str, Any]) -> bool:
    """True for chain vectors and for suppress vectors describing an aggregation -> suppress pipeline over raw
    records (they run as that chain, not from the changelog Kafka's test printed as ``expected_raw``)."""
    if v.get("feature") == "chain":
        return True
    cfg = v.get("config", {})
    return v.get("feature") == "suppress" and "suppress" in cfg and "aggregation" in cfg and "pipeline" in cfg


def skip_reason(v: Dict[str, Any]) -> Optional[str]:
    return size_model_skip(v)


def chain_of(v: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The vector's steps in the chain vocabulary (a pipeline vector's aggregation and suppress become two steps)."""
    cfg = v["config"]
    if "chain" in cfg:
        return cfg["chain"]
    window = cfg.get("window")
    aggregate = {
        "op": "aggregate",
        "window": window,
        # Kafka's default for a windowed aggregation: every update goes downstream (to the suppress).
        "emitStrategy": "onWindowUpdate" if window else None,
        "aggregation": cfg["aggregation"],
    }
    return [aggregate, dict(cfg["suppress"], op="suppress")]


def _aggregation(a, value) -> Any:
    if a == "count":
        return F.count("*")
    if a.get("type") == "aggregate":
        m = re.fullmatch(r'agg \+ "([^"]*)" \+ value', a["aggregator"])
        if not m:
            raise Mismatch(f"no counterpart for aggregator {a['aggregator']!r}")
        return ss.string_fold(value, initial=a["initializer"].strip('"'), separator=m.group(1))
    if a.get("type") == "reduce" and a.get("reducer") == "(v1, v2) -> v2":
        # Kafka keeps the latest value to arrive (ss.latest), not the one of the latest event time (Spark's last).
        return ss.latest(value)
    raise Mismatch(f"no counterpart for aggregation {a!r}")


def _predicate(p: Dict[str, Any], value) -> Any:
    """A filter step's predicate as a Spark condition on the rows it filters (a null value never passes: SQL's
    comparison with null is not true)."""
    if p.get("type") == "valueAtLeast":
        return value.cast("double") >= F.lit(float(p["value"]))
    if p.get("type") == "tableMatched":
        # A join's output whose table side was found: the table's value column is not null.
        return F.col("tv").isNotNull()
    raise Mismatch(f"no counterpart for filter predicate {p!r}")


def _step(df, step: Dict[str, Any], i: int, name: str, table_input: bool, value=None, first_operator=False):
    op = step["op"]
    if op == "filter":
        # Between two of the library's operators, and on a changelog before its suppress, a where runs inside the
        # chain with Kafka's filter semantics (KStream or KTable); on a stream input it is Spark's filter, the same.
        return df.where(_predicate(step["predicate"], F.col("value") if value is None else value))
    if op == "aggregate":
        aggregations = [_aggregation(step["aggregation"], F.col("value") if value is None else value).alias("value")]
        if step.get("window") is None:
            return ss.aggregate(df, key="key", timestamp="ts", aggregations=aggregations, name=name)
        emit = (
            ss.EmitStrategy.on_window_close()
            if step["emitStrategy"] == "onWindowClose"
            else ss.EmitStrategy.on_window_update()
        )
        return ss.aggregate_windowed(
            df,
            key="key",
            timestamp="ts",
            windows=_windows(step["window"]),
            aggregations=aggregations,
            emit=emit,
            name=name,
        )
    if op == "suppress":
        # The changelog's tombstone column is read by the first operator (filters may stand before it).
        kwargs = {"tombstone": "deleted"} if first_operator and table_input else {}
        return ss.suppress(df, key="key", timestamp="ts", suppressed=_suppressed(step, name), **kwargs)
    raise Mismatch(f"no counterpart for chain step {op!r}")


def run(spark, v: Dict[str, Any], name: str) -> None:
    steps_cfg = chain_of(v)
    table_input = v["config"].get("input", {}).get("type") == "table"
    if steps_cfg[0]["op"] == "join":
        return _run_join_first(spark, v, name, steps_cfg)
    driver = TestDriver(spark, SCHEMA, timestamp="ts")
    out = driver.input
    for i, step in enumerate(steps_cfg):
        first = all(s["op"] == "filter" for s in steps_cfg[:i])
        out = _step(out, step, i, f"{name}_{i}", table_input, first_operator=first)

    def feed(records):
        return driver.step([(r["key"], ts(r["ts"]), r["value"], r["value"] is None) for r in records])

    _drive(driver, out, v, steps_cfg, feed)


def _run_join_first(spark, v, name, steps_cfg) -> None:
    join = steps_cfg[0]
    if join.get("keyType") != "string":
        raise Mismatch(f"no counterpart for key type {join.get('keyType')!r}")
    sep = re.search(r'"([^"]*)"', join["joiner"]).group(1)
    driver = TestDriver(spark)
    stream = driver.add_input("stream", "key STRING, ts TIMESTAMP, sv STRING")
    table = driver.add_input("table", "key STRING, ts TIMESTAMP, tv STRING, deleted BOOLEAN")
    versioned = join["table"]["versioned"]
    out = ss.join_versioned(
        stream,
        table,
        on="key",
        stream_timestamp="ts",
        table_timestamp="ts",
        grace=join.get("graceMs"),
        history_retention=join["table"]["historyRetentionMs"] if versioned else None,
        how=join["joinType"],
        tombstone="deleted",
        name=f"{name}_0",
    )
    # The joiner streamValue + sep + tableValue (a missing table value rendered "null"), as the aggregates' input.
    joined_value = F.concat(F.col("sv"), F.lit(sep), F.coalesce(F.col("tv"), F.lit("null")))
    value = joined_value  # what "the value" is until an aggregation replaces it with its own
    for i, step in enumerate(steps_cfg[1:], start=1):
        out = _step(out, step, i, f"{name}_{i}", False, value=value)
        if step["op"] == "aggregate":
            value = None

    def feed(records):
        emitted = []
        for r in records:
            if r["side"] == "stream":
                emitted += driver.step([(r["key"], ts(r["ts"]), r["value"])], input="stream")
            else:
                emitted += driver.step([(r["key"], ts(r["ts"]), r["value"], r["value"] is None)], input="table")
        return emitted if records else driver.advance()

    _drive(driver, out, v, steps_cfg, feed)


def _drive(driver, out, v, steps_cfg, feed) -> None:
    last = steps_cfg[-1]
    window = None
    for s in steps_cfg:
        if s["op"] == "aggregate" and s.get("window") is not None:
            window = s["window"]
    cols = [F.col("key"), F.col("value").cast("string").alias("value"), F.unix_millis("ts").alias("ts_ms")]
    if "window" in out.columns:
        cols += [F.unix_millis("window.start").alias("ws"), F.unix_millis("window.end").alias("we")]
    for flag in ("retraction", "deleted"):
        if flag in out.columns:
            cols.append(F.col(flag).alias(flag))
    driver.start(out.select(*cols))

    expected: Dict[int, Dict[Any, List[Any]]] = defaultdict(lambda: defaultdict(list))
    for o in v.get("expected", []):
        value = None if o["value"] is None else str(o["value"])
        expected[o["after_seq"]][(o["key"], o.get("window_start"), o.get("window_end"))].append((value, o["ts"]))
    inputs: Dict[int, List[Dict[str, Any]]] = defaultdict(list)
    for r in v["input"]:
        inputs[r["seq"]].append(r)
    # A chain ending in a suppress that never expires by time is restarted halfway, as suppress vectors are.
    restart_at = _restart_step(last, list(inputs)) if last["op"] == "suppress" else None
    try:
        end = max([max(inputs, default=-1), max(expected, default=-1)])
        for seq in range(end + 1):
            records = inputs.get(seq, [])
            emitted = feed(records) if records or seq in expected else []
            actual: Dict[Any, List[Any]] = defaultdict(list)
            for r in emitted:
                d = r.asDict()
                tomb = d.get("retraction") or d.get("deleted")
                k = (d["key"], d["ws"], _kafka_end(window, d["we"])) if "ws" in d else (d["key"], None, None)
                actual[k].append((None if tomb else d["value"], d["ts_ms"]))
            compare_step(seq, expected.get(seq, {}), actual)
            if seq == restart_at:
                driver.restart()
                leftover = driver.advance()
                if leftover:
                    raise Mismatch(f"after the restart at seq {seq}: replayed {leftover}")
    finally:
        driver.stop()
